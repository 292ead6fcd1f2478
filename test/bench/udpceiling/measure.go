package main

import (
	"slices"
	"time"

	"github.com/gorxe/gorxe/netio"
)

// drainWait is how long the sink keeps reading after the sender stops, so that datagrams still
// queued in its socket count as delivered rather than lost. It does not enter the rates.
const drainWait = 200 * time.Millisecond

// sendBatch is the number of datagrams offered per Send.
const sendBatch = 4 * netio.IdealBatchSize

// pingSize is the ping-pong datagram: a 64-byte RoCE SEND.
const pingSize = 80

// measure runs every row of the report.
func measure(cfg config) (*report, error) {
	rep := &report{DurationS: cfg.duration.Seconds(), Src: cfg.src.String(), Dst: cfg.dst.String()}
	for _, p := range cfg.paths {
		for _, size := range cfg.sizes {
			row, err := throughput(cfg, p, size)
			if err != nil {
				return nil, err
			}
			rep.Throughput = append(rep.Throughput, row)
		}
	}
	for _, p := range cfg.paths {
		for _, w := range []wait{waitSleep, waitPoll} {
			row, err := pingPong(cfg, p, w)
			if err != nil {
				return nil, err
			}
			rep.PingPong = append(rep.PingPong, row)
		}
	}
	return rep, nil
}

// throughput sends full batches of size-byte datagrams to a sink for cfg.duration.
func throughput(cfg config, p path, size int) (throughputRow, error) {
	row := throughputRow{Path: string(p), DatagramBytes: size}
	peer, err := startPeer("sink", p, cfg.dst)
	if err != nil {
		return row, err
	}
	c, err := listen(p, cfg.src)
	if err != nil {
		_, _ = peer.finish()
		return row, err
	}
	defer c.Close()
	// Several batches per Send, so that runs are cut by the 64-segment and 64 KiB limits rather
	// than by the end of the slice.
	msgs := make([]netio.Message, sendBatch)
	for i := range msgs {
		msgs[i] = netio.Message{Buf: make([]byte, size), Dst: peer.addr}
	}
	sent := 0
	cpu0 := cpuTime()
	start := time.Now()
	var elapsed time.Duration
	for elapsed < cfg.duration {
		n, err := c.Send(msgs)
		sent += n
		if err != nil {
			_, _ = peer.finish()
			return row, err
		}
		elapsed = time.Since(start)
	}
	if sent > 0 {
		row.SenderCPUNSPerDatagram = float64(cpuTime()-cpu0) / float64(sent)
	}
	time.Sleep(drainWait)
	t, err := peer.finish()
	if err != nil {
		return row, err
	}
	row.SentPPS = float64(sent) / elapsed.Seconds()
	if t.WindowNS > 0 {
		w := time.Duration(t.WindowNS).Seconds()
		row.ReceivedPPS = float64(t.WindowDatagrams) / w
		row.ReceivedBytesPerS = float64(t.WindowBytes) / w
	}
	if sent > 0 {
		row.Loss = 1 - float64(t.Datagrams)/float64(sent)
	}
	if sc := c.Counters(); sc.GSOSends > 0 {
		row.SegmentsPerSend = float64(sc.GSOSegments) / float64(sc.GSOSends)
	}
	if t.Datagrams > 0 {
		row.ReceiverCPUNSPerDatagram = float64(t.CPUNS) / float64(t.Datagrams)
	}
	if t.Counters.GROReads > 0 {
		row.SegmentsPerRead = float64(t.Counters.GROSegments) / float64(t.Counters.GROReads)
	}
	return row, nil
}

// A wait is how both ends of a ping-pong wait for the next datagram.
type wait string

const (
	// waitSleep blocks in the receive until the datagram's arrival wakes the thread, as a program
	// that sleeps on its completion channel waits.
	waitSleep wait = "sleep"
	// waitPoll receives without blocking, again and again, as perftest's latency tools and
	// gorxe's busy-poll their completion queues: the ceiling of a polling RDMA program.
	waitPoll wait = "poll"
)

// receiver returns c's receive that waits as w says.
func (w wait) receiver(c *netio.UDPConn) func([]netio.Message) (int, error) {
	if w == waitPoll {
		return c.TryReceive
	}
	return c.Receive
}

// pingPong bounces one datagram off an echo peer for cfg.duration, both ends waiting as w says,
// and reports half round trips.
func pingPong(cfg config, p path, w wait) (pingPongRow, error) {
	row := pingPongRow{Path: string(p), Wait: string(w), DatagramBytes: pingSize}
	peer, err := startPeer(echoRole(w), p, cfg.dst)
	if err != nil {
		return row, err
	}
	defer func() { _, _ = peer.finish() }()
	c, err := listen(p, cfg.src)
	if err != nil {
		return row, err
	}
	defer c.Close()
	out := []netio.Message{{Buf: make([]byte, pingSize), Dst: peer.addr}}
	in := []netio.Message{{Buf: make([]byte, maxDatagram)}}
	receive := w.receiver(c)
	round := func() (time.Duration, error) {
		t0 := time.Now()
		if _, err := c.Send(out); err != nil {
			return 0, err
		}
		for {
			in[0].Buf = in[0].Buf[:cap(in[0].Buf)]
			n, err := receive(in)
			if err != nil {
				return 0, err
			}
			if n > 0 {
				return time.Since(t0), nil
			}
		}
	}
	// Warm up the path (and the peer's first read) before sampling.
	for range 1000 {
		if _, err := round(); err != nil {
			return row, err
		}
	}
	samples := make([]time.Duration, 0, 1<<20)
	start := time.Now()
	for time.Since(start) < cfg.duration {
		rtt, err := round()
		if err != nil {
			return row, err
		}
		samples = append(samples, rtt/2)
	}
	slices.Sort(samples)
	row.Samples = len(samples)
	row.HalfRTTP50NS = percentile(samples, 0.50).Nanoseconds()
	row.HalfRTTP99NS = percentile(samples, 0.99).Nanoseconds()
	return row, nil
}

// percentile returns the q-quantile of sorted samples (nearest rank), or 0 for none.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
