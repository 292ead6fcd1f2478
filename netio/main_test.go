package netio

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gorxe/gorxe/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	addrA = netip.MustParseAddr("10.0.0.1")
	addrB = netip.MustParseAddr("10.0.0.2")
	addr6 = netip.MustParseAddr("fd00::1")
	epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

// newPair returns a fabric on a fake clock with endpoints at addrA and addrB.
func newPair(t testing.TB, cfg FabricConfig) (*Fabric, *clock.Fake, *Endpoint, *Endpoint) {
	t.Helper()
	clk := clock.NewFake(epoch)
	cfg.Clock = clk
	f := NewFabric(cfg)
	a, err := f.NewEndpoint(0, addrA, addr6)
	require.NoError(t, err)
	b, err := f.NewEndpoint(0, addrB)
	require.NoError(t, err)
	t.Cleanup(func() {
		a.Close()
		b.Close()
		f.Close()
	})
	return f, clk, a, b
}

// makeMsgs returns n messages each with a buffer of size bytes.
func makeMsgs(n, size int) []Message {
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i].Buf = make([]byte, size)
	}
	return msgs
}

// resetBufs re-slices every Buf to its capacity for the next Receive.
func resetBufs(msgs []Message) {
	for i := range msgs {
		msgs[i].Buf = msgs[i].Buf[:cap(msgs[i].Buf)]
	}
}

// seqDatagram builds the payload "datagram i": 4 bytes of sequence then filler.
func seqDatagram(buf []byte, i int) []byte {
	buf = buf[:16]
	buf[0], buf[1], buf[2], buf[3] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
	for k := 4; k < len(buf); k++ {
		buf[k] = byte(k)
	}
	return buf
}

func seqOf(b []byte) int { return int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3]) }

// receiveAll drains everything queued at e (which must not block: the caller knows the count).
func receiveAll(t testing.TB, e *Endpoint) []int {
	t.Helper()
	var seqs []int
	msgs := makeMsgs(64, 2048)
	for e.Queued() > 0 {
		resetBufs(msgs)
		n, err := e.Receive(msgs)
		require.NoError(t, err)
		for _, m := range msgs[:n] {
			seqs = append(seqs, seqOf(m.Buf))
		}
	}
	return seqs
}

// sendSeq sends datagrams first..first+n-1 from a to dst one per Send.
func sendSeq(t testing.TB, a Conn, dst netip.AddrPort, first, n int) {
	t.Helper()
	msg := []Message{{Buf: make([]byte, 16), Dst: dst}}
	for i := first; i < first+n; i++ {
		msg[0].Buf = seqDatagram(msg[0].Buf, i)
		_, err := a.Send(msg)
		require.NoError(t, err)
	}
}
