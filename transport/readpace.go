package transport

import (
	"time"

	"github.com/gorxe/gorxe/packet"
)

// readPacer keeps an RC responder's RDMA READ responses to the rate its requester takes them in.
//
// Nothing in RC acknowledges READ responses: the requester asked for them when it posted the
// READ, and a responder may send them as fast as it builds them (kernel rxe sends one per call
// of its responder task, a thousand or more calls per run, and does not look at the requester at
// all; an RNIC sends them at line rate, lowered per QP only by its congestion control when the
// network marks them). A software requester behind a slower path (a virtual NIC, a busy host)
// drops what its queue does not hold, and then discards the rest of the response as out of order
// until it asks again from the first lost PSN, after its retransmit timer: each loss costs the
// rest of the READ twice and a timeout. The one signal a responder gets is that request again.
// So the pacer is a rate limit that the repeats drive, as congestion notifications drive an
// RNIC's rate limiter: the first repeat halves the rate the responses went out at, each later
// one halves it again, and every readPaceGrowEvery packets sent without one raise it by
// 1/readPaceGrowDiv, until the gap between packets is below readPaceMinGap and the responder
// sends unpaced again. Only a repeat of a packet sent since the last cut cuts: a requester that
// goes back N asks again for the READs after the lost one too (nothing of them was resent yet),
// and one that asks again for a READ it got no answer to (its request was dropped) lost nothing.
// A requester that keeps up (gorxe over loopback, an RNIC) never asks again, so it never sees a
// paced response.
//
// While paced, the responses leave in runs of up to readPaceBurst packets, one run per engine
// deadline; the packets received between two runs are handled in between, a repeat among them at
// once. The pace is a token bucket: a run that starts late (timers on an idle Go runtime fire to
// the millisecond) sends what the time since allowed, so the rate holds, but never more than
// readPaceMaxRun packets at once. Runs stay within readPaceMaxInterval of each other: the
// requester's retransmit timer restarts with every response that arrives and must not expire
// between two runs.
type readPacer struct {
	gap  time.Duration // time per response packet; zero: unpaced
	next time.Time     // when the next packet may go, paced (earlier ones are credit)
	grow int           // packets sent since gap last changed

	// What the first cut starts from: packets sent unpaced since start, the last at last, and
	// the PSN the response began with at start.
	start, last time.Time
	sent        int
	startPSN    packet.PSN

	// The response PSNs sent since the last cut are from up to (not including) to.
	from, to packet.PSN
}

const (
	// readPaceBurst is the number of packets a paced run waits for: enough for one batched send,
	// few enough for a virtual NIC's receive ring.
	readPaceBurst = 16
	// readPaceMaxRun bounds the packets of one paced run that starts late.
	readPaceMaxRun = 4 * readPaceBurst
	// readPaceMaxInterval bounds the time between two paced runs, well inside the shortest
	// retransmit timeout requesters use in practice (IBTA's timeout 8, about 1 ms), and the
	// credit or debt the bucket holds.
	readPaceMaxInterval = 500 * time.Microsecond
	// readPaceMinGap is the gap under which the responder stops pacing: 250 ns per packet is
	// 16 GB/s at MTU 4096, more than any path gorxe runs on.
	readPaceMinGap = 250 * time.Nanosecond
	// readPaceMaxGap bounds the cuts: 100 µs per packet, 10,000 packets a second, so that random
	// loss (which repeats requests as overload does) slows a QP down but does not stall it.
	readPaceMaxGap = 100 * time.Microsecond
	// Every readPaceGrowEvery packets sent without a repeat, the gap shrinks by 1/readPaceGrowDiv:
	// the rate doubles again after about 44 steps, 11,000 packets, so that a requester on a
	// steady path loses a burst about once every 11,000 packets.
	readPaceGrowEvery = 256
	readPaceGrowDiv   = 64
	// readPaceIdle is the pause after which a response starts a new stream.
	readPaceIdle = 10 * time.Millisecond
)

// reset forgets the pace: a new connection, whose first response PSN is psn, starts unpaced.
func (p *readPacer) reset(psn packet.PSN) {
	*p = readPacer{from: psn, to: psn}
}

// paced reports whether responses are rate limited.
func (p *readPacer) paced() bool { return p.gap > 0 }

// run returns the packets one paced run waits for: readPaceBurst, or fewer if that many take
// longer than readPaceMaxInterval.
func (p *readPacer) run() int {
	return int(min(max(readPaceMaxInterval/p.gap, 1), readPaceBurst))
}

// budget returns how many response packets a run at now may send.
func (p *readPacer) budget(now time.Time) int {
	switch {
	case !p.paced():
		return readBurst
	case now.Before(p.next):
		return 0
	}
	credit := min(now.Sub(p.next), readPaceMaxInterval)
	return int(min(1+credit/p.gap, readPaceMaxRun))
}

// deadline is when the next paced run is due: when a run's worth of packets may go.
func (p *readPacer) deadline() time.Time {
	return p.next.Add(time.Duration(p.run()-1) * p.gap)
}

// begin notes that a response starts at now, from PSN psn, with none under way. Unpaced, the
// rates are measured from here if nothing was sent for readPaceIdle: responses that follow each
// other are one stream, whose rate is the rate its requester asks for them at (a requester that
// keeps its window asks for the next READ as the last one's responses arrive).
func (p *readPacer) begin(now time.Time, psn packet.PSN) {
	if !p.paced() && (p.sent == 0 || now.Sub(p.last) > readPaceIdle) {
		p.start, p.last, p.sent, p.startPSN = now, now, 0, psn
	}
}

// charge records n response packets sent at now, up to PSN end-1. Packets sent past the budget
// (the rest of a response that a new request found unfinished) are charged too: the next run
// waits for them, but its deadline stays within readPaceMaxInterval.
func (p *readPacer) charge(now time.Time, n int, end packet.PSN) {
	if n == 0 {
		return
	}
	if end.Diff(p.to) > 0 {
		p.to = end
	}
	if !p.paced() {
		p.last = now
		p.sent += n
		return
	}
	p.grow += n
	for p.grow >= readPaceGrowEvery && p.paced() {
		p.grow -= readPaceGrowEvery
		p.gap -= p.gap / readPaceGrowDiv
		if p.gap < readPaceMinGap {
			p.gap = 0
		}
	}
	if !p.paced() {
		p.start, p.last, p.sent, p.startPSN = now, now, 0, end // unpaced again: measure afresh
		return
	}
	if floor := now.Add(-readPaceMaxInterval); p.next.Before(floor) {
		p.next = floor // credit from a pause is bounded
	}
	p.next = p.next.Add(time.Duration(n) * p.gap)
	if bound := now.Add(readPaceMaxInterval - time.Duration(p.run()-1)*p.gap); p.next.After(bound) {
		p.next = bound
	}
}

// repeated records that the requester asked again for the READ response packets from psn on. If
// it had them since the last cut, it lost some: the rate halves, and the answer starts with a
// whole run. The first cut starts from the slower of half the rate the responses went out at and
// the rate the requester got them at (the packets before psn since the response began, over the
// time since): a requester that asks again at once says how fast it keeps up, one that waits for
// its retransmit timer says less (the cut is bounded by readPaceMaxGap, and the pace grows back).
func (p *readPacer) repeated(now time.Time, psn packet.PSN) {
	if psn.LessThan(p.from) || !psn.LessThan(p.to) {
		return
	}
	wasPaced := p.paced()
	if wasPaced {
		p.gap *= 2
	} else {
		var sentPer, gotPer time.Duration
		if p.sent > 0 {
			sentPer = p.last.Sub(p.start) / time.Duration(p.sent)
		}
		if got := psn.Diff(p.startPSN); got > 0 {
			gotPer = now.Sub(p.start) / time.Duration(got)
		}
		p.gap = max(2*max(sentPer, readPaceMinGap), gotPer)
	}
	p.gap = min(p.gap, readPaceMaxGap)
	// The requester waits for the answer to its repeat: a run goes at once.
	if start := now.Add(-time.Duration(p.run()-1) * p.gap); !wasPaced || p.next.After(start) {
		p.next = start
	}
	p.grow = 0
	p.from, p.to = psn, psn
}
