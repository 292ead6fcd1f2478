package perftest

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/oob"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/fabrictest"
	"github.com/gorxe/gorxe/netio"
)

// TestInterruptedClient interrupts a client in the middle of its measurement, as Ctrl-C does: it
// must print the result of the part that ran, fail with tool.ErrInterrupted naming how far it got,
// and hang up, so that its server ends at once saying the peer stopped. The interruption comes
// after the server has sent interruptAfter datagrams: by then the client has completed messages
// (it cannot have more than its TX depth outstanding), so there is a partial result to print.
func TestInterruptedClient(t *testing.T) {
	const interruptAfter = 300
	tests := []struct {
		test Test
		args string
		size string
		unit string
	}{
		{Test{VerbWrite, BW}, "-n 1000000 -s 64", "64", "messages"},
		{Test{VerbRead, Lat}, "-n 1000000 -s 64", "64", "iterations"},
	}
	for _, tt := range tests {
		t.Run(tt.test.Name(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cliCtx, interrupt := context.WithCancel(ctx)
			defer interrupt()
			var sent atomic.Int64
			var once sync.Once
			fab := netio.NewFabric(netio.FabricConfig{})
			t.Cleanup(fab.Close)
			open := func(addr string, tap netio.TapFunc) *gorxe.Device {
				return fabrictest.Devices(t, fab, fabrictest.Options{Config: gorxe.Config{Workers: 2, Tap: tap}}, addr)[0]
			}
			srvDev := open("10.0.0.1", func(dir netio.Direction, _ *netio.Message) {
				if dir == netio.Sent && sent.Add(1) == interruptAfter {
					once.Do(interrupt)
				}
			})
			cliDev := open("10.0.0.2", nil)
			cliConn, srvConn := oobPair(t, ctx)

			type result struct {
				out string
				err error
			}
			results := [2]chan result{make(chan result, 1), make(chan result, 1)}
			for i, client := range []bool{true, false} {
				argv := strings.Fields(tt.args)
				dev, conn, runCtx := srvDev, srvConn, ctx
				if client {
					argv, dev, conn, runCtx = append(argv, "10.0.0.1"), cliDev, cliConn, cliCtx
				}
				p, err := ParseArgs(tt.test, argv)
				require.NoError(t, err)
				go func() {
					var out bytes.Buffer
					pl := newRDMA(p, dev, nil, func(string) {})
					f := &flow{p: p, x: newSession(conn, client, false), s: conn, pl: pl, out: &out, warn: func(string) {},
						full: true, cycleBuffer: 4096}
					err := converse(runCtx, f, conn, gorxe.MTU1024)
					_ = pl.close()
					results[i] <- result{out.String(), err}
				}()
			}
			cli, srv := <-results[0], <-results[1]

			var ie *InterruptedError
			require.ErrorAs(t, cli.err, &ie, "client output:\n%s", cli.out)
			require.ErrorIs(t, cli.err, tool.ErrInterrupted)
			require.ErrorIs(t, cli.err, context.Canceled)
			assert.Equal(t, 1000000, ie.Total)
			assert.Equal(t, tt.unit, ie.Unit)
			require.Positive(t, ie.Done)
			assert.Equal(t, "interrupted after "+strconv.Itoa(ie.Done)+" of 1000000 "+tt.unit, cli.err.Error())
			got := resultFields(t, cli.out)
			assert.Equal(t, []string{tt.size, strconv.Itoa(ie.Done)}, got[:2], "the partial result line:\n%s", cli.out)
			assert.True(t, strings.HasSuffix(cli.out, resultLine), "the table is closed:\n%s", cli.out)

			require.ErrorIs(t, srv.err, oob.ErrPeerClosed)
			assert.Contains(t, srv.err.Error(), "(the peer stopped the test early; its output says why)")
		})
	}
}
