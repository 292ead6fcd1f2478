package gorxe

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/netio"
)

// The device benchmarks measure what a user of the verbs API sees, over the in-memory fabric and
// over UDP on loopback (127.0.0.1 to 127.0.0.2), between two devices in this process:
//
//   - BenchmarkSendRate: 64-byte RC SENDs, message rate (msg/s).
//   - BenchmarkWriteBW: RC RDMA WRITE bandwidth at 4 KiB, 64 KiB and 1 MiB messages, path MTU
//     4096 and 1024.
//   - BenchmarkLatency: half round trip of 64-byte RC SEND, WRITE and READ, with p50, p99 and
//     p99.9 of the samples.
//   - BenchmarkRawUDP: the same UDP backend without RDMA, datagrams of the sizes gorxe sends.
//   - BenchmarkEfficiency: gorxe against raw UDP at the same datagram size, measured back to back
//     in one run so that machine noise cancels.
//
// Every gorxe benchmark also reports cpu-ns/op, the process CPU time (user and system, every
// thread) per operation: on a shared machine it moves less than wall time.

// benchMsgSmall is the message size of the rate and latency benchmarks.
const benchMsgSmall = 64

// benchNetworks are the two networks every device benchmark runs over.
var benchNetworks = []string{"fabric", "udp"}

// benchPeer is one side of a benchmark: a device with one RC QP, its CQ on a completion channel
// and a registered buffer.
type benchPeer struct {
	d   *Device
	pd  *PD
	ch  *CompChannel
	cq  *CQ
	buf []byte
	mr  *MR
	qp  *QP
	gid GID
	ctx context.Context
	wcs [64]WC

	recvRing []RecvWR // the receives sendRate keeps posted, once posted
	peer     *benchPeer
}

// Benchmark queue sizes: deep enough for the deepest pipeline below.
const (
	benchSendWR = 256
	benchRecvWR = 512
	benchCQE    = 2048
	benchBuf    = 2 << 20
)

// openBenchPair opens two devices on network ("fabric" or "udp") and connects an RC QP pair at
// mtu. Everything is released when the benchmark ends.
func openBenchPair(b *testing.B, network string, mtu MTU) (*benchPeer, *benchPeer) {
	b.Helper()
	var da, dp *Device
	switch network {
	case "fabric":
		fab := netio.NewFabric(netio.FabricConfig{QueueLen: 4096})
		b.Cleanup(fab.Close)
		open := func(addr string) *Device {
			d, err := Open(Config{Addr: netip.MustParseAddr(addr), Network: fab.Network()})
			require.NoError(b, err)
			b.Cleanup(func() { d.Close() })
			return d
		}
		da, dp = open("10.0.0.1"), open("10.0.0.2")
	case "udp":
		port := loopbackPort(b)
		da, dp = openUDP(b, "127.0.0.1", port), openUDP(b, "127.0.0.2", port)
	default:
		require.Fail(b, fmt.Sprintf("unknown network %q", network))
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	a, p := newBenchPeer(b, da, ctx), newBenchPeer(b, dp, ctx)
	a.peer, p.peer = p, a
	connectRC(b, a.qp, p.gid, p.qp.QPN(), 0x100, 0x200, mtu)
	connectRC(b, p.qp, a.gid, a.qp.QPN(), 0x200, 0x100, mtu)
	return a, p
}

func newBenchPeer(b *testing.B, d *Device, ctx context.Context) *benchPeer {
	b.Helper()
	p := &benchPeer{d: d, ctx: ctx, buf: make([]byte, benchBuf), gid: d.GIDTable()[1].GID}
	var err error
	if p.pd, err = d.AllocPD(); err != nil {
		require.Fail(b, fmt.Sprint(err))
	}
	if p.ch, err = d.CreateCompChannel(); err != nil {
		require.Fail(b, fmt.Sprint(err))
	}
	if p.cq, err = d.CreateCQ(benchCQE, p.ch); err != nil {
		require.Fail(b, fmt.Sprint(err))
	}
	if p.mr, err = p.pd.RegMR(p.buf, AccessLocalWrite|AccessRemoteWrite|AccessRemoteRead); err != nil {
		require.Fail(b, fmt.Sprint(err))
	}
	p.qp = p.newQP(b)
	return p
}

// newQP creates an RC QP on p's PD and CQ.
func (p *benchPeer) newQP(b *testing.B) *QP {
	b.Helper()
	q, err := p.d.CreateQP(p.pd, &QPInitAttr{SendCQ: p.cq, RecvCQ: p.cq, QPType: QPTypeRC,
		Cap: QPCap{MaxSendWR: benchSendWR, MaxRecvWR: benchRecvWR, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 64}})
	require.NoError(b, err)
	return q
}

// morePairs connects n further RC QP pairs between a and p, on the same CQs, and returns a's
// side of them.
func morePairs(b *testing.B, a, p *benchPeer, n int, mtu MTU) []*QP {
	qs := make([]*QP, n)
	for i := range qs {
		qa, qp := a.newQP(b), p.newQP(b)
		connectRC(b, qa, p.gid, qp.QPN(), 0x100, 0x200, mtu)
		connectRC(b, qp, a.gid, qa.QPN(), 0x200, 0x100, mtu)
		qs[i] = qa
	}
	return qs
}

// sge returns a one-entry scatter/gather list over buf[off:off+n].
func (p *benchPeer) sge(off, n int) []SGE {
	return []SGE{{Addr: p.mr.Addr() + uint64(off), Length: uint32(n), LKey: p.mr.LKey()}}
}

// poll returns the next completions, at least one, sleeping on the completion channel while the
// CQ is empty (the way an event-driven verbs application waits, and fair to the device's
// goroutines on a small machine). A failed completion or a closed device is an error.
func (p *benchPeer) poll() ([]WC, error) {
	for {
		if n := p.cq.Poll(p.wcs[:]); n > 0 {
			return p.checked(n)
		}
		if err := p.cq.ReqNotify(false); err != nil {
			return nil, err
		}
		// A completion may have arrived before the CQ was armed.
		if n := p.cq.Poll(p.wcs[:]); n > 0 {
			return p.checked(n)
		}
		c, err := p.ch.GetEvent(p.ctx)
		if err != nil {
			return nil, err
		}
		c.AckEvents(1)
	}
}

func (p *benchPeer) checked(n int) ([]WC, error) {
	for i := range p.wcs[:n] {
		if wc := &p.wcs[i]; wc.Status != WCSuccess {
			return nil, fmt.Errorf("completion %v (wr_id %d, opcode %v)", wc.Status, wc.WRID, wc.Opcode)
		}
	}
	return p.wcs[:n], nil
}

// mustPoll is poll for the benchmark's own goroutine. A failure reports the counters of both
// devices that are not zero.
func (p *benchPeer) mustPoll(b *testing.B) []WC {
	wcs, err := p.poll()
	if err != nil {
		require.Fail(b, fmt.Sprintf("%v\nlocal counters: %s\npeer counters: %s", err, nonZero(p.d.Counters()), nonZero(p.peer.d.Counters())))
	}
	return wcs
}

// nonZero formats the counters that are not zero.
func nonZero(c Counters) string {
	var s []string
	for name, v := range c.All() {
		if v != 0 {
			s = append(s, fmt.Sprintf("%s=%d", name, v))
		}
	}
	return strings.Join(s, " ")
}

// cpuTime returns the CPU time the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMeter reports cpu-ns/op for the timed part of a benchmark.
type cpuMeter struct{ start time.Duration }

func startCPU() cpuMeter { return cpuMeter{start: cpuTime()} }

func (m cpuMeter) report(b *testing.B, ops int) {
	if ops > 0 {
		b.ReportMetric(float64(cpuTime()-m.start)/float64(ops), "cpu-ns/op")
	}
}

// streamWrites posts n signaled RDMA WRITEs of size bytes from a to p's buffer, keeping depth of
// them in flight, and waits for all of them to complete.
func streamWrites(b *testing.B, a, p *benchPeer, size, depth, n int) {
	wr := []SendWR{{Opcode: WRRDMAWrite, Flags: SendSignaled, SGList: a.sge(0, size),
		RDMA: RDMAInfo{RemoteAddr: p.mr.Addr(), RKey: p.mr.RKey()}}}
	posted, done := 0, 0
	for done < n {
		for posted-done < depth && posted < n {
			wr[0].ID = uint64(posted)
			require.NoError(b, a.qp.PostSend(wr))
			posted++
		}
		done += len(a.mustPoll(b))
	}
}

// benchTxDepth is perftest's default tx-depth for bandwidth tests (ib_send_bw, ib_write_bw): the
// most work requests kept in flight. The RC window of 128 packets bounds what is on the wire
// anyway.
const benchTxDepth = 128

// writeDepth is how many WRITEs of size bytes a bandwidth benchmark keeps in flight: about 1 MiB,
// between 2 and benchTxDepth messages.
func writeDepth(size int) int { return min(max((1<<20)/size, 2), benchTxDepth) }

func BenchmarkWriteBW(b *testing.B) {
	for _, network := range benchNetworks {
		for _, mtu := range []MTU{MTU4096, MTU1024} {
			for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
				b.Run(fmt.Sprintf("%s/mtu%d/%s", network, mtu.Bytes(), sizeName(size)), func(b *testing.B) {
					a, p := openBenchPair(b, network, mtu)
					streamWrites(b, a, p, size, writeDepth(size), 4) // warm the pools
					b.SetBytes(int64(size))
					b.ReportAllocs()
					b.ResetTimer()
					cpu := startCPU()
					streamWrites(b, a, p, size, writeDepth(size), b.N)
					b.StopTimer()
					cpu.report(b, b.N)
				})
			}
		}
	}
}

// BenchmarkWriteBWQPs streams 4 KiB WRITEs over 16 QP pairs at once, benchTxDepth in flight in
// all, each QP with its own UDP source port as rxe gives it.
func BenchmarkWriteBWQPs(b *testing.B) {
	const qps, size = 16, 4 << 10
	for _, network := range benchNetworks {
		b.Run(fmt.Sprintf("%s/qps=%d", network, qps), func(b *testing.B) {
			a, p := openBenchPair(b, network, MTU4096)
			qs := morePairs(b, a, p, qps, MTU4096)
			wrs := make([][]SendWR, qps)
			for i := range wrs {
				wrs[i] = []SendWR{{ID: uint64(i), Opcode: WRRDMAWrite, Flags: SendSignaled, SGList: a.sge(i*size, size),
					RDMA: RDMAInfo{RemoteAddr: p.mr.Addr() + uint64(i*size), RKey: p.mr.RKey()}}}
			}
			run := func(n int) {
				posted, done := 0, 0
				for ; posted < min(n, benchTxDepth); posted++ {
					if err := qs[posted%qps].PostSend(wrs[posted%qps]); err != nil {
						b.Fatal(err)
					}
				}
				for done < n {
					for _, wc := range a.mustPoll(b) {
						done++
						if posted < n {
							if err := qs[wc.WRID].PostSend(wrs[wc.WRID]); err != nil {
								b.Fatal(err)
							}
							posted++
						}
					}
				}
			}
			run(2 * qps)
			b.SetBytes(size)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU()
			run(b.N)
			b.StopTimer()
			cpu.report(b, b.N)
		})
	}
}

// sendDepth is how many 64-byte SENDs the rate benchmark keeps in flight.
const sendDepth = benchTxDepth

// sendRate sends n 64-byte RC SENDs from a to p, sendDepth in flight, while a goroutine plays the
// receiving application: it keeps p's receive queue full, reposting each receive as it completes.
func sendRate(b *testing.B, a, p *benchPeer, n int) {
	if p.recvRing == nil {
		p.recvRing = make([]RecvWR, benchRecvWR)
		for i := range p.recvRing {
			p.recvRing[i] = RecvWR{ID: uint64(i), SGList: p.sge(i*benchMsgSmall, benchMsgSmall)}
		}
		require.NoError(b, p.qp.PostRecv(p.recvRing))
	}
	recvs := p.recvRing
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel() // stops the receiver if the sender fails
	errc := make(chan error, 1)
	go func() {
		q := *p
		q.ctx = ctx
		repost := make([]RecvWR, 0, len(q.wcs))
		for got := 0; got < n; {
			wcs, err := q.poll()
			if err != nil {
				errc <- err
				return
			}
			repost = repost[:0]
			for i := range wcs {
				repost = append(repost, recvs[wcs[i].WRID])
			}
			if err := q.qp.PostRecv(repost); err != nil {
				errc <- err
				return
			}
			got += len(wcs)
		}
		errc <- nil
	}()
	wr := []SendWR{{Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, benchMsgSmall)}}
	posted, done := 0, 0
	for done < n {
		for posted-done < sendDepth && posted < n {
			wr[0].ID = uint64(posted)
			require.NoError(b, a.qp.PostSend(wr))
			posted++
		}
		done += len(a.mustPoll(b))
	}
	// Every SEND was acknowledged, so every receive completion is queued.
	require.NoError(b, <-errc)
}

func BenchmarkSendRate(b *testing.B) {
	for _, network := range benchNetworks {
		b.Run(network, func(b *testing.B) {
			a, p := openBenchPair(b, network, MTU4096)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU()
			sendRate(b, a, p, b.N)
			b.StopTimer()
			cpu.report(b, b.N)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
		})
	}
}

// latencyOp is the operation a latency benchmark times.
type latencyOp int

const (
	latSend  latencyOp = iota // ping-pong of SENDs: the peer application answers each one
	latWrite                  // a signaled WRITE until its acknowledgement completes it
	latRead                   // a READ until its response completes it
)

func (o latencyOp) String() string { return [...]string{"send", "write", "read"}[o] }

// pingPong times n round trips of op between a and p into rtt (one sample each). A SEND round
// trip goes from posting on a to a's receive completion of p's answer, which p's goroutine posts
// as soon as its own receive completes (ib_send_lat). A WRITE or READ round trip goes from
// posting on a to its completion, which needs the peer's acknowledgement or response.
func pingPong(b *testing.B, a, p *benchPeer, op latencyOp, rtt []time.Duration) {
	wr := []SendWR{{Flags: SendSignaled, SGList: a.sge(0, benchMsgSmall),
		RDMA: RDMAInfo{RemoteAddr: p.mr.Addr(), RKey: p.mr.RKey()}}}
	recv := []RecvWR{{SGList: a.sge(benchMsgSmall, benchMsgSmall)}}
	var want WCOpcode
	switch op {
	case latWrite:
		wr[0].Opcode, want = WRRDMAWrite, WCRDMAWrite
	case latRead:
		wr[0].Opcode, want = WRRDMARead, WCRDMARead
	case latSend:
		wr[0].Opcode, want = WRSend, WCRecv
		stop := echo(b, a, p)
		defer stop()
	}
	for i := range rtt {
		t0 := time.Now()
		require.NoError(b, a.qp.PostSend(wr))
		for done := false; !done; {
			for _, wc := range a.mustPoll(b) {
				if wc.Opcode == want {
					done = true
				}
				if wc.Opcode == WCRecv {
					recv[0].ID = wc.WRID
					require.NoError(b, a.qp.PostRecv(recv))
				}
			}
		}
		rtt[i] = time.Since(t0)
	}
}

// echo pre-posts receives on a and p and starts p's answering goroutine, which replies to every
// SEND it receives with a SEND. The returned function stops it.
func echo(b *testing.B, a, p *benchPeer) (stop func()) {
	const ring = 16
	for _, x := range []*benchPeer{a, p} {
		for i := range ring {
			require.NoError(b, x.qp.PostRecv([]RecvWR{{ID: uint64(i), SGList: x.sge(benchMsgSmall, benchMsgSmall)}}))
		}
	}
	ctx, cancel := context.WithCancel(p.ctx)
	errc := make(chan error, 1)
	go func() {
		q := *p
		q.ctx = ctx
		recv := []RecvWR{{SGList: q.sge(benchMsgSmall, benchMsgSmall)}}
		send := []SendWR{{Opcode: WRSend, Flags: SendSignaled, SGList: q.sge(0, benchMsgSmall)}}
		for {
			wcs, err := q.poll()
			if err != nil {
				errc <- err
				return
			}
			for _, wc := range wcs {
				if wc.Opcode != WCRecv {
					continue
				}
				recv[0].ID = wc.WRID
				if err := q.qp.PostRecv(recv); err != nil {
					errc <- err
					return
				}
				if err := q.qp.PostSend(send); err != nil {
					errc <- err
					return
				}
			}
		}
	}()
	return func() {
		cancel()
		err := <-errc
		assert.False(b, err != nil && ctx.Err() == nil, err)
	}
}

// reportLatency reports the p50, p99 and p99.9 half round trips of the samples.
func reportLatency(b *testing.B, rtt []time.Duration) {
	slices.Sort(rtt)
	at := func(q float64) float64 {
		i := min(int(q*float64(len(rtt))), len(rtt)-1)
		return float64(rtt[i]) / 2
	}
	b.ReportMetric(at(0.5), "p50-ns")
	b.ReportMetric(at(0.99), "p99-ns")
	b.ReportMetric(at(0.999), "p99.9-ns")
}

func BenchmarkLatency(b *testing.B) {
	for _, network := range benchNetworks {
		for _, op := range []latencyOp{latSend, latWrite, latRead} {
			b.Run(network+"/"+op.String(), func(b *testing.B) {
				a, p := openBenchPair(b, network, MTU4096)
				pingPong(b, a, p, op, make([]time.Duration, 16)) // warm up
				rtt := make([]time.Duration, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				cpu := startCPU()
				pingPong(b, a, p, op, rtt)
				b.StopTimer()
				cpu.report(b, b.N)
				reportLatency(b, rtt)
			})
		}
	}
}

// rawPair is two UDP backends on loopback, as a device pair uses them but without RDMA.
type rawPair struct {
	tx, rx *netio.UDPConn
	out    []netio.Message
	in     []netio.Message
	lost   int // datagrams the last run counted as lost
}

// openRawPair opens a sender on 127.0.0.1 and a receiver on 127.0.0.2, on free ports, with the
// configuration a device uses. Datagrams leave from a source-port socket, as a QP's do.
func openRawPair(b *testing.B) *rawPair {
	b.Helper()
	open := func(addr string) *netio.UDPConn {
		for range 20 {
			c, err := netio.ListenUDP(netio.UDPConfig{Addrs: []netip.Addr{netip.MustParseAddr(addr)},
				Port: freeUDPPort(b), ZeroChecksum: true})
			if err == nil {
				b.Cleanup(func() { c.Close() })
				return c
			}
		}
		b.Skip("no free UDP port on " + addr)
		return nil
	}
	r := &rawPair{tx: open("127.0.0.1"), rx: open("127.0.0.2")}
	src := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 0xC001)
	r.out = make([]netio.Message, netio.IdealBatchSize)
	r.in = make([]netio.Message, netio.IdealBatchSize)
	for i := range r.out {
		r.out[i] = netio.Message{Buf: make([]byte, transport4K), Src: src, Dst: r.rx.LocalAddrs()[0]}
		r.in[i].Buf = make([]byte, transport4K)
	}
	return r
}

// transport4K is a buffer size that holds any datagram gorxe sends at MTU 4096.
const transport4K = 4096 + 64

// rawWindow bounds the datagrams in flight in a raw UDP run, as the RC window of 128 packets (and
// the socket buffer) bound a QP's: about 2 MiB of 4 KiB datagrams.
const rawWindow = 512

// rawLossTimeout is how long the raw sender waits for progress before counting what is in flight
// as lost (loopback drops only when a socket buffer overflows).
const rawLossTimeout = 100 * time.Millisecond

// run moves n datagrams of size bytes from tx to rx, at most rawWindow in flight, and returns the
// time until rx had received n.
func (r *rawPair) run(b *testing.B, size, n int) time.Duration {
	for i := range r.out {
		r.out[i].Buf = r.out[i].Buf[:size]
	}
	var recvd atomic.Int64
	credit := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		total := 0
		for total < n {
			for i := range r.in {
				r.in[i].Buf = r.in[i].Buf[:cap(r.in[i].Buf)]
			}
			k, err := r.rx.Receive(r.in)
			if err != nil {
				done <- err
				return
			}
			total += k
			recvd.Store(int64(total))
			select {
			case credit <- struct{}{}:
			default:
			}
		}
		done <- nil
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	start := time.Now()
	sent, lost, target := 0, 0, n
	for sent < target {
		inflight := sent - int(recvd.Load()) - lost
		if inflight >= rawWindow {
			timer.Reset(rawLossTimeout)
			select {
			case <-credit:
			case <-timer.C:
				// Nothing arrived for a while: what is in flight was dropped. Send as much again.
				l := sent - int(recvd.Load()) - lost
				lost += l
				target += l
			}
			continue
		}
		k := min(len(r.out), rawWindow-inflight, target-sent)
		m, err := r.tx.Send(r.out[:k])
		require.NoError(b, err)
		sent += m
	}
	require.NoError(b, <-done)
	r.lost = lost
	return time.Since(start)
}

// rawDatagramSizes are the datagram sizes of a 64-byte SEND and of full packets at MTU 1024 and
// 4096 (payload, BTH and ICRC).
var rawDatagramSizes = []int{benchMsgSmall + 16, 1024 + 16, 4096 + 16}

func BenchmarkRawUDP(b *testing.B) {
	for _, size := range rawDatagramSizes {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			r := openRawPair(b)
			r.run(b, size, 256)

			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU()
			d := r.run(b, size, b.N)
			b.StopTimer()
			cpu.report(b, b.N)
			b.ReportMetric(float64(b.N)/d.Seconds(), "pkt/s")
			b.ReportMetric(float64(r.lost), "lost")
		})
	}
}

// BenchmarkEfficiency runs gorxe over UDP loopback and then raw UDP with the same number of
// datagrams of the same size, and reports efficiency: gorxe's data packets per second over raw
// UDP's datagrams per second (equal to the goodput ratio when each raw datagram is credited with
// the payload of the packet it stands for). ns/op and MB/s are gorxe's; raw-MB/s is the raw
// UDP payload rate.
func BenchmarkEfficiency(b *testing.B) {
	cases := []struct {
		name string
		mtu  MTU
		size int // message size
	}{
		{"send64", MTU4096, benchMsgSmall},
		{"write64K/mtu4096", MTU4096, 64 << 10},
		{"write64K/mtu1024", MTU1024, 64 << 10},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			a, p := openBenchPair(b, "udp", c.mtu)
			r := openRawPair(b)
			pkts := max(1, c.size/c.mtu.Bytes())
			dgram := min(c.size, c.mtu.Bytes()) + 16
			run := func(n int) {
				if c.size == benchMsgSmall {
					sendRate(b, a, p, n)
				} else {
					streamWrites(b, a, p, c.size, writeDepth(c.size), n)
				}
			}
			run(16)
			r.run(b, dgram, 256)
			b.SetBytes(int64(c.size))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := startCPU()
			t0 := time.Now()
			run(b.N)
			gorxe := time.Since(t0)
			b.StopTimer()
			cpu.report(b, b.N)
			raw := r.run(b, dgram, b.N*pkts)
			b.ReportMetric(raw.Seconds()/gorxe.Seconds(), "efficiency")
			b.ReportMetric(float64(b.N*pkts*dgram)/raw.Seconds()/1e6, "raw-MB/s")
		})
	}
}

// sizeName formats a message size for a benchmark name.
func sizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}
