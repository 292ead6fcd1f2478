package gorxe

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BenchmarkLatencyBusyPoll is BenchmarkLatency's 64-byte SEND ping-pong over UDP loopback with
// both devices in latency mode (Config.BusyPoll) and both applications busy-polling their CQs,
// as ib_send_lat does: the polls take the packets off the network themselves. Compare its p50-ns
// with BenchmarkLatency/udp/send, where the applications sleep on their completion channels.
func BenchmarkLatencyBusyPoll(b *testing.B) {
	port := loopbackPort(b)
	a := newBenchPeer(b, openLatency(b, "127.0.0.1", port), b.Context())
	p := newBenchPeer(b, openLatency(b, "127.0.0.2", port), b.Context())
	a.peer, p.peer = p, a
	connectRC(b, a.qp, p.gid, p.qp.QPN(), 0x100, 0x200, MTU4096)
	connectRC(b, p.qp, a.gid, a.qp.QPN(), 0x200, 0x100, MTU4096)
	a.postRecvs(b)
	p.postRecvs(b)
	stop := busyEcho(b, p)
	defer stop()
	busyPingPong(b, a, make([]time.Duration, 16)) // warm up
	rtt := make([]time.Duration, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	busyPingPong(b, a, rtt)
	b.StopTimer()
	cpu.report(b, b.N)
	reportLatency(b, rtt)
}

// postRecvs posts the receives a ping-pong keeps posted.
func (p *benchPeer) postRecvs(b *testing.B) {
	for i := range 16 {
		require.NoError(b, p.qp.PostRecv([]RecvWR{{ID: uint64(i), SGList: p.sge(benchMsgSmall, benchMsgSmall)}}))
	}
}

// spinPoll polls p's CQ until it returns completions, which it checks.
func (p *benchPeer) spinPoll(stop <-chan struct{}) ([]WC, error) {
	for {
		if n := p.cq.Poll(p.wcs[:]); n > 0 {
			return p.checked(n)
		}
		select {
		case <-stop:
			return nil, nil
		default:
		}
		runtime.Gosched() // as perftest's tools do: the device's goroutines need a processor too
	}
}

// busyPingPong times round trips from a: a SEND, then a's receive of the echo.
func busyPingPong(b *testing.B, a *benchPeer, rtt []time.Duration) {
	send := []SendWR{{Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, benchMsgSmall)}}
	recv := []RecvWR{{SGList: a.sge(benchMsgSmall, benchMsgSmall)}}
	for i := range rtt {
		t0 := time.Now()
		if err := a.qp.PostSend(send); err != nil {
			b.Fatal(err)
		}
		for done := false; !done; {
			wcs, err := a.spinPoll(nil)
			if err != nil {
				b.Fatal(err)
			}
			for _, wc := range wcs {
				if wc.Opcode == WCRecv {
					done = true
					recv[0].ID = wc.WRID
					if err := a.qp.PostRecv(recv); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		rtt[i] = time.Since(t0)
	}
}

// busyEcho answers every SEND p receives with a SEND, busy-polling, until stopped.
func busyEcho(b *testing.B, p *benchPeer) (stop func()) {
	quit, done := make(chan struct{}), make(chan error, 1)
	go func() {
		send := []SendWR{{Opcode: WRSend, Flags: SendSignaled, SGList: p.sge(0, benchMsgSmall)}}
		recv := []RecvWR{{SGList: p.sge(benchMsgSmall, benchMsgSmall)}}
		for {
			wcs, err := p.spinPoll(quit)
			if err != nil || wcs == nil {
				done <- err
				return
			}
			for _, wc := range wcs {
				if wc.Opcode != WCRecv {
					continue
				}
				recv[0].ID = wc.WRID
				if err := p.qp.PostRecv(recv); err != nil {
					done <- err
					return
				}
				if err := p.qp.PostSend(send); err != nil {
					done <- err
					return
				}
			}
		}
	}()
	return func() {
		close(quit)
		assert.NoError(b, <-done, "echo")
	}
}
