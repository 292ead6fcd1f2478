package transport

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// TestResponderReadPacedAfterRepeat: a requester that asks again for the tail of a READ lost
// responses, so the answer to the repeat goes out paced at half the rate the first answer went
// out at: a run of readPaceBurst packets at once, then one run each time the deadline comes and
// nothing before it, every PSN once and in order, until the response is complete.
func TestResponderReadPacedAfterRepeat(t *testing.T) {
	env := newRC(t)
	const pkts, lost = 2048, 1500
	n := pkts * rspMTUB
	m, buf := env.region(n, remoteAccess)
	copy(buf, rspPattern(n, 5))

	// Unpaced: a burst per call, due again at once. The last burst goes 1024 µs after the first,
	// so the answer went out at 2048 packets in 1024 µs, 500 ns per packet.
	t0 := env.now
	ps := env.deliver(env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(m.IOVA(), m.RKey(), uint32(n))))
	require.Len(t, ps, readBurst, "packets the request's call built")
	const calls = pkts / readBurst
	for i := 1; i < calls; i++ {
		require.True(t, env.e.Deadline().Equal(env.now), "deadline %v unpaced, want now", env.e.Deadline())
		env.now = t0.Add(time.Duration(i) * 1024 * time.Microsecond / (calls - 1))
		require.Len(t, env.run(), readBurst, "packets Run built")
	}
	require.True(t, env.e.Deadline().IsZero(), "deadline %v after the response", env.e.Deadline())

	// The requester lost PSN 100+lost and asks for the rest at once (it got 1500 packets in
	// 1024 µs, faster than half the send rate): 1 µs per packet from now on.
	start := env.now
	ps = env.deliver(env.req(packet.RCRDMAReadRequest, 100+lost, true, nil,
		rspRETH(m.IOVA()+lost*rspMTUB, m.RKey(), uint32(n-lost*rspMTUB))))
	require.Len(t, ps, readPaceBurst, "packets of the repeat's first run")
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseFirst, 100+lost, packet.SyndromeACKUnlimited, 1)
	runs := 1
	for !env.e.Deadline().IsZero() {
		require.Empty(t, env.run(), "packets a run before the deadline built")
		d := env.e.Deadline()
		require.True(t, d.After(env.now), "deadline %v not after the last run at %v", d, env.now)
		require.LessOrEqual(t, d.Sub(env.now), time.Duration(readPaceBurst)*time.Microsecond, "time to the next run")
		env.now = d
		more := env.run()
		runs++
		require.NotEmpty(t, more, "packets of run %d, at its deadline", runs)
		if !env.e.Deadline().IsZero() {
			require.Len(t, more, readPaceBurst, "packets of run %d", runs)
		}
		ps = append(ps, more...)
	}
	require.Len(t, ps, pkts-lost, "packets answering the repeat")
	require.Equal(t, (pkts-lost+readPaceBurst-1)/readPaceBurst, runs, "runs")
	var got []byte
	for i, p := range ps {
		require.Equal(t, packet.PSN(100+lost+i), p.BTH().PSN(), "packet %d PSN", i)
		got = append(got, p.Payload()...)
	}
	rspWantResp(t, ps[len(ps)-1], packet.RCRDMAReadResponseLast, 100+pkts-1, packet.SyndromeACKUnlimited, 1)
	require.Equal(t, buf[lost*rspMTUB:], got, "payload")
	// 548 packets at 1 µs each, a little less as the pace grows back (1/64 every 256 packets).
	took := env.now.Sub(start)
	require.Greater(t, took, 500*time.Microsecond, "time the paced answer took")
	require.Less(t, took, 548*time.Microsecond, "time the paced answer took")
}

// TestReadPacer follows the pace through cuts and growth: the first repeat halves the measured
// unpaced rate, only repeats of packets sent since the last cut cut again, the cuts stop at
// readPaceMaxGap, and packets sent without a repeat bring the responder back to unpaced; credit
// and debt stay within readPaceMaxInterval.
func TestReadPacer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var p readPacer
	p.reset(100)
	require.False(t, p.paced(), "paced after reset")
	require.Equal(t, readBurst, p.budget(t0), "unpaced budget")

	// 400 packets (PSNs 100-499) sent in 1 ms, 2.5 µs each; 3 ms after the start the requester
	// asks again from PSN 400: it got 300 packets in 3 ms, 10 µs each, the slower of the two.
	p.begin(t0, 100)
	p.charge(t0, 200, 300)
	p.charge(t0.Add(time.Millisecond), 200, 500)
	now := t0.Add(3 * time.Millisecond)
	p.repeated(now, 400)
	require.Equal(t, 10*time.Microsecond, p.gap, "gap after the first cut")
	require.Equal(t, readPaceBurst, p.budget(now), "budget of the repeat's answer")
	require.Zero(t, p.budget(now.Add(-time.Duration(readPaceBurst)*p.gap)), "budget before the run's time")

	// Repeats of packets not sent since the cut: the READs after the lost one, which a requester
	// that goes back N asks for again, and PSNs before the cut's. No second cut.
	p.repeated(now, 499)
	p.repeated(now, 399)
	require.Equal(t, 10*time.Microsecond, p.gap, "gap after repeats of packets not sent since the cut")
	// Packets sent after the cut, lost again: a repeat of one of them cuts.
	p.charge(now, 16, 416)
	p.repeated(now, 415)
	require.Equal(t, 20*time.Microsecond, p.gap, "gap after the second cut")
	for range 10 {
		p.charge(now, 1, p.to.Add(1))
		p.repeated(now, p.to.Sub(1))
	}
	require.Equal(t, readPaceMaxGap, p.gap, "gap after many cuts")

	// Debt is bounded: after a flush of 1000 packets the next run is due in readPaceMaxInterval.
	p.charge(now, 1000, p.to.Add(1000))
	require.True(t, p.deadline().Equal(now.Add(readPaceMaxInterval)), "next run after a flush: %v", p.deadline().Sub(now))
	require.Less(t, p.gap, readPaceMaxGap, "gap after 1000 packets sent")
	p.gap = readPaceMaxGap
	// So is credit: after a pause a run sends what readPaceMaxInterval allows, and no more than
	// readPaceMaxRun.
	later := now.Add(time.Second)
	require.Equal(t, 1+int(readPaceMaxInterval/readPaceMaxGap), p.budget(later), "budget after a pause")
	p.charge(later, 6, p.to.Add(6))
	require.True(t, p.next.Equal(later.Add(readPaceMaxGap)), "next packet after a run that used the credit: %v", p.next.Sub(later))
	p.gap = time.Microsecond
	require.Equal(t, readPaceMaxRun, p.budget(later.Add(time.Second)), "budget after a pause at 1 µs per packet")
	p.gap = readPaceMaxGap

	// Growth: 1/64 off the gap per 256 packets, then unpaced once below readPaceMinGap.
	gap := p.gap
	p.grow = 0
	p.charge(later, readPaceGrowEvery, p.to.Add(readPaceGrowEvery))
	require.Equal(t, gap-gap/readPaceGrowDiv, p.gap, "gap after 256 packets")
	for i := 0; p.paced(); i++ {
		require.Less(t, i, 1000, "never unpaced")
		p.charge(later, readPaceGrowEvery, p.to.Add(readPaceGrowEvery))
	}
	require.Equal(t, readBurst, p.budget(later), "budget unpaced again")

	// The whole answer in one call, which says nothing of the send rate: the rate the requester
	// got the packets at, 256 in 5.12 ms, is the pace.
	p.reset(0)
	p.begin(t0, 0)
	p.charge(t0, 1024, 1024)
	p.repeated(t0.Add(5120*time.Microsecond), 256)
	require.Equal(t, 20*time.Microsecond, p.gap, "gap after a cut from the requester's rate")
	// READs that follow each other are one stream: 128 packets in 1 ms, 7812 ns each; a READ
	// after a pause of more than readPaceIdle starts a new one.
	p.reset(0)
	p.begin(t0, 0)
	p.charge(t0, 64, 64)
	p.begin(t0.Add(time.Millisecond), 64)
	p.charge(t0.Add(time.Millisecond), 64, 128)
	p.repeated(t0.Add(time.Millisecond), 127)
	require.Equal(t, 2*7812*time.Nanosecond, p.gap, "gap after a cut in a stream of READs")
	p.reset(0)
	p.begin(t0, 0)
	p.charge(t0, 64, 64)
	p.begin(t0.Add(time.Second), 64)
	p.charge(t0.Add(time.Second+time.Millisecond), 64, 128)
	p.repeated(t0.Add(time.Second+time.Millisecond), 127)
	require.Equal(t, 31250*time.Nanosecond, p.gap, "gap after a cut in a READ after a pause")
	// Nothing measured at all (the first packet lost): readPaceMinGap.
	p.reset(0)
	p.begin(t0, 0)
	p.charge(t0, 8, 8)
	p.repeated(t0, 0)
	require.Equal(t, 2*readPaceMinGap, p.gap, "gap after a cut with nothing measured")
}

// TestReadPacedToSlowRequester: a requester that takes 20 µs per packet and holds 256 in its
// queue (a software stack behind a virtual NIC) reads 4 MiB in 1 MiB READs. The first burst
// overruns its queue; from the repeat on, the responder keeps to the requester's pace, so the
// READs complete with the data intact, having sent few packets twice.
func TestReadPacedToSlowRequester(t *testing.T) {
	h := newHarness(t)
	h.keep = true
	a, b := h.pair(hQPOptions{mtu: qp.MTU1024, timeout: 14, maxRdAtomic: 4}) // 67 ms, as perftest's
	a.d.service, a.d.queue = 20*time.Microsecond, 256
	const reads, size = 4, 1 << 20
	src := b.d.region(reads*size, mr.AccessRemoteRead)
	copy(src.buf, hPattern(reads*size, 9))
	dst := a.d.region(reads*size, 0)
	for i := range reads {
		a.post(qp.SendWR{ID: uint64(i), Opcode: qp.WRRDMARead, Flags: qp.SendSignaled,
			SGList: []mr.SGE{dst.sge(i*size, size)}, RDMA: qp.RDMAInfo{RemoteAddr: src.mr.IOVA() + uint64(i*size), RKey: src.mr.RKey()}})
	}
	h.runUntil(func() bool { return a.scq.Len() == reads }, time.Minute)
	wcs := a.pollSend()
	require.Len(t, wcs, reads, "READ completions")
	for i, wc := range wcs {
		wantWC(t, wc, uint64(i), cq.WCSuccess, cq.OpcodeRDMARead)
	}
	require.True(t, bytes.Equal(src.buf, dst.buf), "data read differs")

	sent := 0
	for _, p := range h.trace {
		var pp packet.Parsed
		require.NoError(t, packet.Parse(p.buf, &pp))
		if p.path.Src.Addr() == b.d.addr && pp.Opcode().Kind() == packet.KindRDMAReadResponse {
			sent++
		}
	}
	const needed = reads * size / 1024
	t.Logf("%d READ response packets for %d in %v of fake time; network %+v", sent, needed, h.now.Sub(hStart), h.stats)
	require.NotZero(t, h.stats.Overflowed, "the requester's queue never overflowed")
	require.Less(t, float64(sent)/needed, 1.3, "READ response packets sent per packet needed")
}

// TestResponderRepeatOfEarlierRead: a requester that lost a response of one READ while the
// responder answers the next one asks again from the lost PSN and discards everything after it
// (go-back-N), so the answer under way is abandoned and the repeat answered at once, not dropped
// as a request the responder is too busy for.
func TestResponderRepeatOfEarlierRead(t *testing.T) {
	env := newRC(t)
	const long = 3 * readBurst
	m, buf := env.region((4+long)*rspMTUB, remoteAccess)
	copy(buf, rspPattern(len(buf), 7))
	require.Len(t, env.deliver(env.req(packet.RCRDMAReadRequest, 100, true, nil, rspRETH(m.IOVA(), m.RKey(), 4*rspMTUB))), 4,
		"packets answering the first READ")
	ps := env.deliver(env.req(packet.RCRDMAReadRequest, 104, true, nil, rspRETH(m.IOVA()+4*rspMTUB, m.RKey(), long*rspMTUB)))
	require.Len(t, ps, readBurst, "packets the second READ's call built")

	// PSN 102 was lost: the requester asks for the first READ's last two packets again.
	ps = env.deliver(env.req(packet.RCRDMAReadRequest, 102, true, nil, rspRETH(m.IOVA()+2*rspMTUB, m.RKey(), 2*rspMTUB)))
	require.Len(t, ps, 2, "packets answering the repeat")
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseFirst, 102, packet.SyndromeACKUnlimited, 2)
	rspWantResp(t, ps[1], packet.RCRDMAReadResponseLast, 103, packet.SyndromeACKUnlimited, 2)
	require.Equal(t, buf[2*rspMTUB:4*rspMTUB], append(ps[0].Payload(), ps[1].Payload()...), "payload of the repeat")
	require.Zero(t, env.e.Counters().Load(counter.RcvdBusy), "requests dropped as busy")
	require.True(t, env.e.Deadline().IsZero(), "deadline %v: the abandoned answer goes on", env.e.Deadline())

	// Then it asks for the second READ again, which is answered from its first packet.
	env.now = env.now.Add(readPaceMaxInterval)
	ps = env.deliver(env.req(packet.RCRDMAReadRequest, 104, true, nil, rspRETH(m.IOVA()+4*rspMTUB, m.RKey(), long*rspMTUB)))
	require.NotEmpty(t, ps, "packets answering the second READ again")
	rspWantResp(t, ps[0], packet.RCRDMAReadResponseFirst, 104, packet.SyndromeACKUnlimited, 2)
}
