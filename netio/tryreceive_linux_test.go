package netio

import (
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTryReceiveUDP: TryReceive returns 0 at once on an empty socket, even while another goroutine
// waits in Receive, and takes datagrams that are already there, with GRO on and off.
func TestTryReceiveUDP(t *testing.T) {
	for _, gro := range []bool{true, false} {
		t.Run(map[bool]string{true: "gro", false: "nogro"}[gro], func(t *testing.T) {
			conns := listenPair(t, UDPConfig{DisableGRO: !gro, SetIPv4ID: func(*Message, uint16, uint16) {}},
				[]netip.Addr{lo1}, []netip.Addr{lo2})
			a, b := conns[0], conns[1]
			in := makeMsgs(4, 2048)
			n, err := b.TryReceive(in)
			require.NoError(t, err)
			require.Zero(t, n)

			// A goroutine waiting in Receive must not hold TryReceive up. Datagrams go to
			// either of them, each exactly once.
			waited := make(chan []int, 1)
			go func() {
				msgs := makeMsgs(4, 2048)
				n, err := b.Receive(msgs)
				var seqs []int
				for _, m := range msgs[:n] {
					seqs = append(seqs, seqOf(m.Buf))
				}
				if err != nil && !errors.Is(err, net.ErrClosed) {
					seqs = append(seqs, -1)
				}
				waited <- seqs
			}()
			n, err = b.TryReceive(in)
			require.NoError(t, err)
			require.Zero(t, n)

			out := make([]byte, 64)
			for i := range 2 {
				_, err = a.Send([]Message{{Buf: seqDatagram(out, i), Dst: b.LocalAddrs()[0]}})
				require.NoError(t, err)
			}
			seen := map[int]bool{}
			add := func(seq int) {
				assert.False(t, seen[seq], "datagram %d delivered twice", seq)
				seen[seq] = true
			}
			done := false
			for len(seen) < 2 {
				select {
				case seqs := <-waited:
					done = true
					for _, s := range seqs {
						add(s)
					}
				default:
				}
				resetBufs(in)
				n, err := b.TryReceive(in)
				require.NoError(t, err)
				for _, m := range in[:n] {
					add(seqOf(m.Buf))
				}
			}
			if !done {
				b.Close() // the waiting Receive got nothing: release it
				assert.Empty(t, <-waited)
			}
			assert.Equal(t, map[int]bool{0: true, 1: true}, seen)
		})
	}
}

// TestTryReceiveFabric: the fabric endpoint returns what is queued and 0 when nothing is.
func TestTryReceiveFabric(t *testing.T) {
	_, _, a, b := newPair(t, FabricConfig{})
	in := makeMsgs(4, 2048)
	n, err := b.TryReceive(in)
	require.NoError(t, err)
	require.Zero(t, n)
	_, err = a.Send([]Message{{Buf: seqDatagram(make([]byte, 64), 7), Dst: b.LocalAddrs()[0]}})
	require.NoError(t, err)
	n, err = b.TryReceive(in)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	assert.Equal(t, 7, seqOf(in[0].Buf))
	b.Close()
	_, err = b.TryReceive(in)
	require.ErrorIs(t, err, net.ErrClosed)
}
