package netio

import (
	"net/netip"
	"testing"
)

// BenchmarkReceiveEmpty measures a receive call that finds the socket empty: the batch
// preparation and one system call, the fixed cost every read of a busy-then-idle receiver pays.
func BenchmarkReceiveEmpty(b *testing.B) {
	c := listenPair(b, UDPConfig{}, []netip.Addr{lo1})[0]
	msgs := makeMsgs(IdealBatchSize, 4200)
	b.ReportAllocs()
	for b.Loop() {
		if n, err := c.receiveFrom(c.listeners[0], msgs, false); n != 0 || err != nil {
			b.Fatal(n, err)
		}
	}
}
