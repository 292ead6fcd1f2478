package gorxe

import (
	"net/netip"
	"testing"

	"github.com/gorxe/gorxe/netio"
)

// benchWrite streams RDMA WRITEs of size bytes from a to b, keeping depth of them in flight.
func benchWrite(b *testing.B, a, peer *node, qa *QP, size int) {
	const depth = 16
	wcs := make([]WC, depth)
	wr := []SendWR{{Opcode: WRRDMAWrite, Flags: SendSignaled, SGList: a.sge(0, size),
		RDMA: RDMAInfo{RemoteAddr: peer.mr.Addr(), RKey: peer.mr.RKey()}}}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	posted, done, inflight := 0, 0, 0
	for done < b.N {
		for inflight < depth && posted < b.N {
			wr[0].ID = uint64(posted)
			if err := qa.PostSend(wr); err != nil {
				b.Fatal(err)
			}
			posted++
			inflight++
		}
		got := a.wait(b, 1)
		for _, wc := range got {
			if wc.Status != WCSuccess {
				b.Fatalf("completion %+v", wc)
			}
		}
		done += len(got)
		inflight -= len(got)
		// Collect whatever else completed without sleeping again.
		k := a.cq.Poll(wcs)
		done += k
		inflight -= k
	}
}

func BenchmarkRCWriteFabric(b *testing.B) {
	fab := netio.NewFabric(netio.FabricConfig{QueueLen: 4096})
	defer fab.Close()
	open := func(addr string) *Device {
		d, err := Open(Config{Addr: netip.MustParseAddr(addr), Network: fabricNet(fab)})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { d.Close() })
		return d
	}
	a, p := newNode(b, open("10.0.0.1")), newNode(b, open("10.0.0.2"))
	qa, _ := rcPair(b, a, p, MTU4096)
	benchWrite(b, a, p, qa, 65536)
}

func BenchmarkRCWriteUDPLoopback(b *testing.B) {
	port := loopbackPort(b)
	a, p := newNode(b, openUDP(b, "127.0.0.1", port)), newNode(b, openUDP(b, "127.0.0.2", port))
	qa, _ := rcPair(b, a, p, MTU4096)
	benchWrite(b, a, p, qa, 65536)
}
