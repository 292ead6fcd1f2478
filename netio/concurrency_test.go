package netio

import (
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/clock"
)

// TestFabricConcurrentRealClock runs several senders through a jittery, duplicating link on the
// real clock while one goroutine receives, to exercise the timer path under the race detector.
func TestFabricConcurrentRealClock(t *testing.T) {
	f := NewFabric(FabricConfig{Clock: clock.Real{}, QueueLen: 8192})
	defer f.Close()
	a, err := f.NewEndpoint(0, addrA)
	require.NoError(t, err)
	defer a.Close()
	b, err := f.NewEndpoint(0, addrB)
	require.NoError(t, err)
	defer b.Close()
	cfg := FaultConfig{Dup: 0.5, Jitter: 200 * time.Microsecond, Reorder: 0.1, ReorderDelay: 100 * time.Microsecond, Seed: 2}
	require.NoError(t, f.SetLinkFaults(addrA, addrB, cfg))
	fc, err := WithFaults(a, FaultConfig{Corrupt: 0.1, Delay: 50 * time.Microsecond, Seed: 3}, nil)
	require.NoError(t, err)
	const senders, each = 4, 250
	var wg sync.WaitGroup
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := []Message{{Buf: make([]byte, 16), Dst: netip.AddrPortFrom(addrB, DefaultPort), Src: netip.AddrPortFrom(addrA, uint16(0xC000+s))}}
			for i := 0; i < each; i++ {
				msg[0].Buf = seqDatagram(msg[0].Buf, i)
				var err error
				if i%2 == 0 {
					_, err = fc.Send(msg)
				} else {
					_, err = a.Send(msg)
				}
				if !assert.NoError(t, err) {
					return
				}
			}
		}()
	}
	wg.Wait()
	// The wrapper's delayed datagrams reach the link later, so the number of duplicates is only
	// final once the link has seen every datagram.
	done := func(got int) bool {
		c := f.LinkFaultCounters(addrA, addrB)
		return c.Sent == senders*each && got == int(c.Sent+c.Duplicated)
	}
	in := makeMsgs(32, 64)
	for got := 0; !done(got); {
		resetBufs(in)
		n, err := b.Receive(in)
		require.NoError(t, err)
		got += n
	}
	require.Equal(t, 0, f.InFlight(), "left over: fabric %d, wrapper %d, queue %d", f.InFlight(), fc.InFlight(), b.Queued())
	require.Equal(t, 0, fc.InFlight(), "left over: fabric %d, wrapper %d, queue %d", f.InFlight(), fc.InFlight(), b.Queued())
	require.Equal(t, 0, b.Queued(), "left over: fabric %d, wrapper %d, queue %d", f.InFlight(), fc.InFlight(), b.Queued())
}
