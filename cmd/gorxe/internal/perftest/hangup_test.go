package perftest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/oob"
)

// oobPair connects two out-of-band connections over TCP on the loopback: the client's and the
// server's.
func oobPair(t *testing.T, ctx context.Context) (*oob.Conn, *oob.Conn) {
	t.Helper()
	l, err := oob.Listen(ctx, 0)
	require.NoError(t, err)
	defer l.Close()
	accepted := make(chan *oob.Conn, 1)
	go func() {
		c, err := l.Accept(ctx, 10*time.Second, oob.DefaultTimeout)
		if err != nil {
			c = nil
		}
		accepted <- c
	}()
	cli, err := oob.Dial(ctx, "127.0.0.1", l.Port(), oob.DefaultTimeout)
	require.NoError(t, err)
	srv := <-accepted
	require.NotNil(t, srv)
	return cli, srv
}

// TestFailedSideHangsUp runs both sides of each bandwidth test over a real out-of-band
// connection, with one side's measurement ending in an error completion (the retry counter
// exceeded, as at heavy loss). That side must fail with the completion, and the other, which
// waits for its next message without a time limit, must end at once with an error that points at
// the peer's output instead of at a different tool.
func TestFailedSideHangsUp(t *testing.T) {
	tests := []struct {
		name       string
		test       Test
		failClient bool // the client's measurement fails, else the server's
	}{
		{"write_bw", Test{VerbWrite, BW}, true},
		{"read_bw", Test{VerbRead, BW}, true},
		{"atomic_bw", Test{VerbAtomic, BW}, true},
		{"send_bw client", Test{VerbSend, BW}, true},
		{"send_bw server", Test{VerbSend, BW}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cliConn, srvConn := oobPair(t, ctx)
			errs := make([]chan error, 2)
			for i, client := range []bool{true, false} {
				argv := []string{"-n", "5"}
				conn := srvConn
				if client {
					argv, conn = append(argv, "peer"), cliConn
				}
				p, err := ParseArgs(tt.test, argv)
				require.NoError(t, err)
				fp := &fakePlane{
					dests:  []Dest{{QPN: uint32(0x10 + i), PSN: uint32(i), GID: GIDFromString(t, "10.0.0.1")}},
					in:     info{device: "gorxe_test", mtuBytes: 1024, gidIndex: 1},
					report: Report{Size: 65536, Iters: 5, BWPeak: 1, BWAvg: 1, MsgRate: 1},
				}
				side := "server"
				if client {
					side = "client"
				}
				if client == tt.failClient {
					fp.bwErr = wcError(side, &gorxe.WC{WRID: 3, Status: gorxe.WCRetryExcErr}, 5, 3)
				}
				f := &flow{p: p, x: newSession(conn, client, false), s: conn, pl: fp, out: new(bytes.Buffer), full: true,
					warn: func(string) {}, cycleBuffer: 4096}
				errs[i] = make(chan error, 1)
				go func() { errs[i] <- converse(ctx, f, conn, gorxe.MTU1024) }()
			}
			failed, waiting := errs[1], errs[0]
			if tt.failClient {
				failed, waiting = errs[0], errs[1]
			}
			// Neither side has a time limit on the step that fails: only the hang-up ends it.
			bound := time.After(30 * time.Second)
			select {
			case err := <-failed:
				require.ErrorIs(t, err, ErrCompletion)
				assert.Contains(t, err.Error(), "Failed status 12 (transport retry counter exceeded)")
			case <-bound:
				require.Fail(t, "the failing side did not return")
			}
			select {
			case err := <-waiting:
				require.ErrorIs(t, err, oob.ErrPeerClosed)
				assert.Contains(t, err.Error(), "(the peer stopped the test early; its output says why)")
				assert.NotContains(t, err.Error(), "different tool")
			case <-bound:
				require.Fail(t, "the waiting side is still waiting after its peer failed")
			}
		})
	}
}
