package stack

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
	"github.com/gorxe/gorxe/transport"
)

// ackRig is a stack with one RC QP whose fake engine answers each packet it receives with one
// packet of opcode answer to a raw peer (counting a completion if completes is set), and each
// run (a post) with a SEND ONLY.
type ackRig struct {
	*testRig
	q    *QP
	e    *fakeEngine
	peer *rawPeer
}

func newACKRig(t *testing.T, answer packet.Opcode, completes bool) *ackRig {
	x := &ackRig{testRig: newRig(t, "10.0.0.1")}
	x.q, x.e = x.create(t, qp.TypeRC)
	x.peer = newRawPeer(t, x.testRig, "10.0.0.2")
	emit := func(op packet.Opcode, out *transport.Output) {
		pkt, err := packet.AppendPacket(out.Alloc()[:0], &packet.Headers{BTH: packet.BTHFields{Opcode: op, PKey: 0xFFFF, DestQP: 77}}, nil)
		require.NoError(t, err)
		out.Packets = append(out.Packets, transport.Packet{Buf: pkt, Env: packet.Envelope{
			Src: netip.AddrPortFrom(mustAddr("10.0.0.1"), 0xC001), Dst: netip.AddrPortFrom(mustAddr("10.0.0.2"), packet.UDPPort)}})
	}
	x.e.mu.Lock()
	x.e.onReceive = func(_ time.Time, out *transport.Output) {
		emit(answer, out)
		if completes {
			out.Completions++
		}
	}
	x.e.onRun = func(_ time.Time, out *transport.Output) { emit(packet.RCSendOnly, out) }
	x.e.mu.Unlock()
	return x
}

// arrive hands the stack one SEND ONLY for the QP as a read of the network does: from a poll on
// the application's goroutine if polled is set, otherwise from the receive goroutine.
func (x *ackRig) arrive(t *testing.T, polled bool) {
	src := netip.AddrPortFrom(mustAddr("10.0.0.2"), 0xC000)
	dst := netip.AddrPortFrom(mustAddr("10.0.0.1"), packet.UDPPort)
	scr := runScratch(x.rt)
	fillRun(scr, src, dst, signed(t, x.q.qpn, src, dst, false))
	x.rt.dispatch(scr, 1, polled)
	waitRan(t, x.e)
}

// opcodes returns the opcodes of the next n packets the peer receives, waiting for them.
func (x *ackRig) opcodes(t *testing.T, n int) []packet.Opcode {
	t.Helper()
	var ops []packet.Opcode
	msgs := []netio.Message{{Buf: make([]byte, 256)}}
	for len(ops) < n {
		got, err := x.peer.ep.Receive(msgs)
		require.NoError(t, err)
		require.Equal(t, 1, got)
		ops = append(ops, packet.Opcode(msgs[0].Buf[0]))
		msgs[0].Buf = msgs[0].Buf[:cap(msgs[0].Buf)]
	}
	return ops
}

// nothingSent checks that the peer has received nothing; the test cannot go on otherwise, since
// what it read is gone.
func (x *ackRig) nothingSent(t *testing.T) {
	t.Helper()
	n, err := x.peer.ep.TryReceive([]netio.Message{{Buf: make([]byte, 256)}})
	require.NoError(t, err)
	require.Zero(t, n, "packets sent before the application's next step")
}

// answer has the QP send (a post's run), as a QP that answers the messages it gets does.
func (x *ackRig) answer(t *testing.T) {
	require.NoError(t, x.q.PostSend(nil))
	require.Equal(t, []packet.Opcode{packet.RCSendOnly}, x.opcodes(t, 1))
}

// A poll that finds a message for a QP that answers keeps the drain's ACKs back until the
// application's next step, so that its reply goes out first; anything else is sent at once.
func TestPolledDrainKeepsItsACKs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		answered  bool
		polled    bool
		answer    packet.Opcode
		completes bool
		kept      bool
	}{
		{"polled ACK of a completed message", true, true, packet.RCAcknowledge, true, true},
		{"ACK from the receive goroutine", true, false, packet.RCAcknowledge, true, false},
		{"polled ACK without a completion", true, true, packet.RCAcknowledge, false, false},
		{"polled READ response", true, true, packet.RCRDMAReadResponseOnly, true, false},
		{"polled ACK of a QP that does not answer", false, true, packet.RCAcknowledge, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newACKRig(t, tc.answer, tc.completes)
			if tc.answered {
				x.answer(t)
			}
			x.arrive(t, tc.polled)
			if !tc.kept {
				assert.Equal(t, []packet.Opcode{tc.answer}, x.opcodes(t, 1))
				return
			}
			x.nothingSent(t)
			// The application's reply: the post's run goes out ahead of the kept ACK.
			require.NoError(t, x.q.PostSend(nil))
			assert.Equal(t, []packet.Opcode{packet.RCSendOnly, packet.RCAcknowledge}, x.opcodes(t, 2))
			// It answered again, so the next message's ACK is kept too; without an answer, the
			// one after is not.
			x.arrive(t, true)
			x.nothingSent(t)
			require.True(t, x.pollUntilSent(t))
			assert.Equal(t, []packet.Opcode{packet.RCAcknowledge}, x.opcodes(t, 1))
			x.arrive(t, true)
			assert.Equal(t, []packet.Opcode{packet.RCAcknowledge}, x.opcodes(t, 1))
		})
	}
}

// pollUntilSent polls until a poll reports work, which sends kept ACKs; Poll returns false while
// another goroutine holds the poll or the worker's run lock.
func (x *ackRig) pollUntilSent(t *testing.T) bool {
	end := time.Now().Add(10 * time.Second)
	for !x.rt.Poll() {
		if time.Now().After(end) {
			return false
		}
		runtime.Gosched()
	}
	return true
}

// A kept ACK goes out at the next poll that finds nothing, or on the worker's timer maxACKHold
// later, whichever comes first.
func TestKeptACKsLeave(t *testing.T) {
	t.Run("next empty poll", func(t *testing.T) {
		x := newACKRig(t, packet.RCAcknowledge, true)
		x.answer(t)
		x.arrive(t, true)
		x.nothingSent(t)
		require.True(t, x.pollUntilSent(t), "Poll never sent the kept ACK")
		assert.Equal(t, []packet.Opcode{packet.RCAcknowledge}, x.opcodes(t, 1))
	})
	t.Run("timer", func(t *testing.T) {
		x := newACKRig(t, packet.RCAcknowledge, true)
		x.answer(t)
		at := x.clk.Now().Add(maxACKHold)
		x.arrive(t, true)
		x.nothingSent(t)
		waitTimer(t, x.testRig, at)
		x.clk.AdvanceTo(at)
		assert.Equal(t, []packet.Opcode{packet.RCAcknowledge}, x.opcodes(t, 1))
	})
}

func TestRotate(t *testing.T) {
	pkts := make([]transport.Packet, 5)
	for i := range pkts {
		pkts[i].Buf = []byte{byte(i)}
	}
	rotate(pkts, 2)
	var got []byte
	for _, p := range pkts {
		got = append(got, p.Buf[0])
	}
	assert.Equal(t, []byte{2, 3, 4, 0, 1}, got)
}

// Kept ACKs leave before the device's QPs change, before a MAD is posted, when the stack closes
// and when asked to (SendKept): a peer may wait for the acknowledgement before it does what the
// MAD asks, and a closing or exiting program's peer waits for it all the same.
func TestKeptACKsLeaveBeforeControl(t *testing.T) {
	for _, tc := range []struct {
		name string
		step func(t *testing.T, x *ackRig, other, gsi *QP)
	}{
		{"QP added", func(t *testing.T, x *ackRig, _, _ *QP) {
			added, _ := x.create(t, qp.TypeUD)
			require.NotSame(t, x.q.w, added.w, "added on the kept ACK's worker, whose own run would send it")
		}},
		{"QP modified", func(t *testing.T, x *ackRig, other, _ *QP) { require.NoError(t, other.Modify(&qp.Attr{}, 0)) }},
		{"QP destroyed", func(t *testing.T, x *ackRig, other, _ *QP) { require.NoError(t, other.Destroy()) }},
		{"MAD posted", func(t *testing.T, x *ackRig, _, gsi *QP) { require.NoError(t, gsi.PostSend(nil)) }},
		{"asked for", func(t *testing.T, x *ackRig, _, _ *QP) { x.rt.SendKept() }},
		{"stack closed", func(t *testing.T, x *ackRig, _, _ *QP) {
			x.closed = true
			require.NoError(t, x.rt.Close())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newACKRig(t, packet.RCAcknowledge, true)
			// QPNs alternate between the two workers: other, the GSI QP and the QP a step adds
			// (after the spacer) are on the worker that does not keep the ACK, so that only
			// SendKept can send it.
			other, _ := x.create(t, qp.TypeUD)
			gsi, _ := x.create(t, qp.TypeGSI)
			x.create(t, qp.TypeUD) // the spacer
			require.NotSame(t, x.q.w, other.w)
			require.NotSame(t, x.q.w, gsi.w)
			x.answer(t)
			x.arrive(t, true)
			x.nothingSent(t)
			tc.step(t, x, other, gsi)
			x.sentOnly(t, packet.RCAcknowledge)
		})
	}
}

// sentOnly checks that the peer has received exactly one packet by now, of opcode op.
func (x *ackRig) sentOnly(t *testing.T, op packet.Opcode) {
	t.Helper()
	msgs := []netio.Message{{Buf: make([]byte, 256)}, {Buf: make([]byte, 256)}}
	n, err := x.peer.ep.TryReceive(msgs)
	require.NoError(t, err)
	require.Equal(t, 1, n, "packets the peer has received")
	assert.Equal(t, op, packet.Opcode(msgs[0].Buf[0]))
}
