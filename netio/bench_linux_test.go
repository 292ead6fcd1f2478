package netio

import (
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// udpModes are the two ways the UDP backend moves datagrams: one sendmmsg/recvmmsg entry per
// datagram, and runs segmented on send (GSO) and coalesced on receive (GRO).
var udpModes = []struct {
	name string
	cfg  UDPConfig
}{
	{"mmsg", UDPConfig{DisableGSO: true, DisableGRO: true}},
	{"gso", UDPConfig{SetIPv4ID: func(*Message, uint16, uint16) {}}},
	// GRO on at the receiver, but a sender that does not segment (kernel rxe, or gorxe sending
	// zero checksums): every datagram arrives alone and is copied out.
	{"gro-only", UDPConfig{DisableGSO: true}},
}

var benchSizes = []int{80, 1040, 4112}

// BenchmarkUDPSend measures Send of full batches of one flow while another goroutine drains the
// receiver; %delivered shows whether the receiver kept up.
func BenchmarkUDPSend(b *testing.B) {
	for _, mode := range udpModes {
		for _, size := range benchSizes {
			b.Run(mode.name+"/"+byteSize(size), func(b *testing.B) {
				conns := listenPair(b, mode.cfg, []netip.Addr{lo1}, []netip.Addr{lo2})
				tx, rx := conns[0], conns[1]
				out := makeMsgs(IdealBatchSize, size)
				for i := range out {
					out[i].Dst = rx.LocalAddrs()[0]
					out[i].Src = netip.AddrPortFrom(lo1, 0xC001)
				}
				done := make(chan int)
				go func() {
					in := makeMsgs(IdealBatchSize, 4200)
					total := 0
					for {
						resetBufs(in)
						n, err := rx.Receive(in)
						if err != nil {
							done <- total
							return
						}
						total += n
					}
				}()
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				sent := 0
				for sent < b.N {
					n, err := tx.Send(out)
					require.NoError(b, err)
					sent += n
				}
				b.StopTimer()
				rx.Close()
				got := <-done
				b.ReportMetric(float64(got)/float64(sent)*100, "%delivered")
			})
		}
	}
}

// BenchmarkUDPReceive measures Receive of full batches while another goroutine keeps the socket
// fed; one op is one datagram received.
func BenchmarkUDPReceive(b *testing.B) {
	for _, mode := range udpModes {
		for _, size := range benchSizes {
			b.Run(mode.name+"/"+byteSize(size), func(b *testing.B) {
				conns := listenPair(b, mode.cfg, []netip.Addr{lo1}, []netip.Addr{lo2})
				tx, rx := conns[0], conns[1]
				var stop atomic.Bool
				fed := make(chan struct{})
				go func() {
					defer close(fed)
					out := makeMsgs(IdealBatchSize, size)
					for i := range out {
						out[i].Dst = rx.LocalAddrs()[0]
					}
					for !stop.Load() {
						if _, err := tx.Send(out); err != nil {
							return
						}
					}
				}()
				in := makeMsgs(IdealBatchSize, 4200)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				for got := 0; got < b.N; {
					resetBufs(in)
					n, err := rx.Receive(in)
					require.NoError(b, err)
					got += n
				}
				b.StopTimer()
				stop.Store(true)
				<-fed
			})
		}
	}
}

// BenchmarkSendCall measures one Send of a full batch of one flow (64 datagrams of 80 bytes
// from a source-port socket) to a port nobody listens on, so that no receiver shares the CPU and
// the kernel never makes the sender wait: the user-space cost of a call, which callgrind counts
// exactly, and its system calls per datagram. Conn.Send takes its batch from the free list;
// a Sender (a device's worker's) has its own.
func BenchmarkSendCall(b *testing.B) {
	for _, mode := range udpModes[:2] {
		for _, via := range []string{"Send", "Sender"} {
			b.Run(mode.name+"/"+via, func(b *testing.B) {
				conns := listenPair(b, mode.cfg, []netip.Addr{lo1}, []netip.Addr{lo2})
				tx := conns[0]
				dst := conns[1].LocalAddrs()[0]
				require.NoError(b, conns[1].Close())
				out := makeMsgs(IdealBatchSize, 80)
				for i := range out {
					out[i].Dst, out[i].Src = dst, netip.AddrPortFrom(lo1, 0xC001)
				}
				var s Sender = tx
				if via == "Sender" {
					s = NewSender(tx)
				}
				before := tx.Counters()
				b.ReportAllocs()
				for b.Loop() {
					if n, err := s.Send(out); n != len(out) || err != nil {
						b.Fatal(n, err)
					}
				}
				after := tx.Counters()
				b.ReportMetric(float64(after.SendCalls-before.SendCalls)/float64(after.SentDatagrams-before.SentDatagrams), "sendmmsg/datagram")
			})
		}
	}
}

// BenchmarkSocketFor looks up a source-port socket from every processor at once, as the workers
// of a device do when they send: what the lookup costs when several senders meet on the table.
func BenchmarkSocketFor(b *testing.B) {
	c := listenPair(b, UDPConfig{}, []netip.Addr{lo1})[0]
	m := Message{Buf: make([]byte, 80), Src: netip.AddrPortFrom(lo1, 0xC001), Dst: netip.AddrPortFrom(lo2, DefaultPort)}
	_, err := c.socketFor(&m)
	require.NoError(b, err)
	b.RunParallel(func(pb *testing.PB) {
		m := m
		for pb.Next() {
			if _, err := c.socketFor(&m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
