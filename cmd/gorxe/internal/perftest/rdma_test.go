package perftest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/internal/fabrictest"
	"github.com/gorxe/gorxe/netio"
)

// fabricPair opens two devices on an in-memory network.
func fabricPair(t *testing.T) (*gorxe.Device, *gorxe.Device) {
	t.Helper()
	fab := netio.NewFabric(netio.FabricConfig{})
	t.Cleanup(fab.Close)
	devs := fabrictest.Devices(t, fab, fabrictest.Options{Config: gorxe.Config{Workers: 2}}, "10.0.0.1", "10.0.0.2")
	return devs[0], devs[1]
}

// runRDMA runs both sides of a test on real gorxe devices, with the exchange in memory, and
// returns the client's and the server's output.
func runRDMA(t *testing.T, test Test, args string) (string, string) {
	t.Helper()
	srvDev, cliDev := fabricPair(t)
	a, b := newPipeStreams()
	type result struct {
		client    bool
		out, warn string
		err       error
	}
	results := make(chan result, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, client := range []bool{true, false} {
		argv := strings.Fields(args)
		dev, s := srvDev, b
		if client {
			argv, dev, s = append(argv, "10.0.0.1"), cliDev, a
		}
		p, err := ParseArgs(test, argv)
		require.NoError(t, err)
		go func() {
			var out, warn bytes.Buffer
			w := func(m string) { fmt.Fprintln(&warn, m) }
			mtu, err := portMTU(p, dev, w)
			if err == nil {
				pl := newRDMA(p, dev, nil, w)
				f := &flow{p: p, x: newSession(s, client, false), s: s, pl: pl, out: &out, warn: w, full: p.Output == "", cycleBuffer: 4096}
				err = f.run(ctx, mtu)
				s.close()
				if cerr := pl.close(); err == nil {
					err = cerr
				}
			}
			side := "server"
			if client {
				side = "client"
			}
			if err != nil {
				err = fmt.Errorf("%s: %w", side, err)
			}
			results <- result{client, out.String(), warn.String(), err}
		}()
	}
	var outs [2]string
	for range 2 {
		r := <-results
		require.NoError(t, r.err, "%v\nnotices: %s", r.err, r.warn)
		if r.client {
			outs[0] = r.out
		} else {
			outs[1] = r.out
		}
	}
	return outs[0], outs[1]
}

// resultLine returns the line after the results header, split into fields.
func resultFields(t *testing.T, out string) []string {
	t.Helper()
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, " #bytes") && i+1 < len(lines) {
			return strings.Fields(lines[i+1])
		}
	}
	require.Fail(t, fmt.Sprintf("no result in:\n%s", out))
	return nil
}

// Every test runs on gorxe devices, both sides in one process, and reports the message size and
// iteration count it ran with.
func TestRDMA(t *testing.T) {
	tests := []struct {
		test Test
		args string
		size string
		// iters is the iteration column of the client's report ("" when the server prints none).
		iters string
	}{
		{Test{VerbWrite, BW}, "-n 20 -s 4096", "4096", "20"},
		{Test{VerbWrite, BW}, "-n 10 -s 65536 -c UC", "65536", "10"},
		{Test{VerbWrite, BW}, "-n 10 -s 64 -q 3 -l 2", "64", "30"},
		{Test{VerbWrite, BW}, "-n 8 -s 16 -I 64 --report_gbits", "16", "8"},
		{Test{VerbRead, BW}, "-n 10 -s 8192 -o 4", "8192", "10"},
		{Test{VerbSend, BW}, "-n 20 -s 1024", "1024", "20"},
		{Test{VerbSend, BW}, "-n 20 -s 2048 -c UD -e", "2048", "20"},
		{Test{VerbSend, BW}, "-n 10 -s 512 -c UC -q 2", "512", "20"},
		// 70 QPs of 512 receives need two receive CQs (cqSet).
		{Test{VerbSend, BW}, "-n 5 -s 64 -q 70", "64", "350"},
		{Test{VerbAtomic, BW}, "-n 20", "8", "20"},
		// Iterations that are not a multiple of the post list end with a shorter list.
		{Test{VerbSend, BW}, "-n 10 -s 64 -l 4", "64", "10"},
		{Test{VerbSend, BW}, "-n 10 -s 64 -l 4 -q 2", "64", "20"},
		{Test{VerbWrite, BW}, "-n 10 -s 64 -l 4", "64", "10"},
		{Test{VerbWrite, BW}, "-n 7 -s 64 -l 3 -q 3", "64", "21"},
		{Test{VerbRead, BW}, "-n 10 -s 64 -l 4", "64", "10"},
		{Test{VerbAtomic, BW}, "-n 5 -l 2", "8", "5"},
		{Test{VerbAtomic, BW}, "-n 20 -A CMP_AND_SWAP", "8", "20"},
		{Test{VerbWrite, Lat}, "-n 20 -s 300", "300", "20"},
		{Test{VerbWrite, Lat}, "-n 10 -c UC", "2", "10"},
		{Test{VerbRead, Lat}, "-n 10 -s 64", "64", "10"},
		{Test{VerbSend, Lat}, "-n 10 -s 64", "64", "10"},
		{Test{VerbSend, Lat}, "-n 10 -s 32 -c UD -e", "32", "10"},
		{Test{VerbAtomic, Lat}, "-n 10 -A CMP_AND_SWAP", "8", "10"},
	}
	for _, tt := range tests {
		t.Run(tt.test.Name()+" "+tt.args, func(t *testing.T) {
			cli, srv := runRDMA(t, tt.test, tt.args)
			got := resultFields(t, cli)
			assert.False(t, got[0] != tt.size || got[1] != tt.iters, "client result %v, want size %s and %s iterations\n%s", got, tt.size, tt.iters, cli)
			if tt.test.Kind == BW || tt.test.Verb == VerbWrite || tt.test.Verb == VerbSend {
				if got := resultFields(t, srv); got[0] != tt.size || got[1] != tt.iters {
					assert.Fail(t, fmt.Sprintf("server result %v\n%s", got, srv))
				}
			}
		})
	}
}

// -a runs every size; a UD test stops at the MTU.
func TestRDMAAllSizes(t *testing.T) {
	cli, _ := runRDMA(t, Test{VerbSend, Lat}, "-a -n 5 -c UD")
	var sizes []string
	lines := strings.Split(cli, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, " #bytes") {
			for _, r := range lines[i+1:] {
				if f := strings.Fields(r); len(f) > 2 && f[1] == "5" {
					sizes = append(sizes, f[0])
				}
			}
		}
	}
	got := strings.Join(sizes, " ")
	assert.Equal(t, "2 4 8 16 32 64 128 256 512 1024 2048 4096", got, "sizes %s\n%s", got, cli)
}

// A timed run reports the messages of its sampled window.
func TestRDMADuration(t *testing.T) {
	cli, srv := runRDMA(t, Test{VerbWrite, BW}, "-D 1 -f 0 -s 1024")
	for _, out := range []string{cli, srv} {
		f := resultFields(t, out)
		assert.False(t, f[0] != "1024" || f[1] == "0" || f[2] != "0.00", "timed result %v\n%s", f, out)
	}
	cli, _ = runRDMA(t, Test{VerbWrite, Lat}, "-D 1 -f 0")
	assert.Contains(t, cli, "t_avg[usec]    tps average", "timed latency output:\n%s", cli)
}
