package gorxe

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// openLatency opens a device in latency mode on a real UDP socket at addr.
func openLatency(t testing.TB, addr string, port uint16) *Device {
	t.Helper()
	d, err := Open(Config{Addr: netip.MustParseAddr(addr), Port: port, Workers: 2, BusyPoll: 20 * time.Microsecond})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

// TestE2ELatencyMode runs the loopback traffic with both devices in latency mode, where CQ polls
// take packets off the network themselves and posts run their engine at once.
func TestE2ELatencyMode(t *testing.T) {
	port := loopbackPort(t)
	a := newNode(t, openLatency(t, "127.0.0.1", port))
	b := newNode(t, openLatency(t, "127.0.0.2", port))
	qa, qb := rcPair(t, a, b, MTU4096)
	ua, ub := udPair(t, a, b)
	t.Run("RCSendRecv", func(t *testing.T) { testSendRecv(t, a, b, qa, qb) })
	t.Run("RCWrite", func(t *testing.T) { testWrite(t, a, b, qa, qb) })
	t.Run("RCRead", func(t *testing.T) { testRead(t, a, b, qa) })
	t.Run("RCAtomics", func(t *testing.T) { testAtomics(t, a, b, qa) })
	t.Run("UDSend", func(t *testing.T) { testUDSend(t, a, b, ua, ub) })
}

// TestLatencyModeConfig: a negative BusyPoll or ReceivePoll is refused.
func TestLatencyModeConfig(t *testing.T) {
	for _, cfg := range []Config{{BusyPoll: -time.Microsecond}, {ReceivePoll: -time.Microsecond}} {
		cfg.Addr = netip.MustParseAddr("127.0.0.1")
		_, err := Open(cfg)
		require.ErrorIs(t, err, ErrInvalidConfig)
	}
}

// TestLatencyModePollAllocs: a SEND round in latency mode, with the CQ polls taking the packets
// off the network, allocates nothing.
func TestLatencyModePollAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes the buffer pools allocate")
	}
	port := loopbackPort(t)
	a := newNode(t, openLatency(t, "127.0.0.1", port))
	b := newNode(t, openLatency(t, "127.0.0.2", port))
	qa, qb := rcPair(t, a, b, MTU4096)
	testSendRecv(t, a, b, qa, qb) // warms the pools and the polls' buffers
	recv := []RecvWR{{ID: 1, SGList: b.sge(0, 64)}}
	send := []SendWR{{ID: 2, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 64)}}
	wcs := make([]WC, 4)
	deadline := time.Now().Add(20 * time.Second)
	spin := func(n *node) {
		for n.cq.Poll(wcs) == 0 {
			if time.Now().After(deadline) {
				panic("no completion")
			}
		}
	}
	allocs := testing.AllocsPerRun(100, func() {
		if qb.PostRecv(recv) != nil || qa.PostSend(send) != nil {
			panic("post failed")
		}
		spin(b)
		spin(a)
	})
	require.Zero(t, allocs)
	require.Equal(t, WCSuccess, wcs[0].Status)
}
