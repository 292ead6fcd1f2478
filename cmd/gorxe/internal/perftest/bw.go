package perftest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gorxe/gorxe"
)

// pollBatch is how many completions a bandwidth run takes from its CQ at once.
const pollBatch = 16

// window is the part of a timed run that is measured: perftest warms up for the margin, samples,
// and stops sampling a margin before the end.
type window struct {
	start, sampleFrom, sampleTo, end time.Time
}

func newWindow(p *Params) window {
	now := time.Now()
	d, m := time.Duration(p.Duration)*time.Second, time.Duration(p.Margin)*time.Second
	return window{start: now, sampleFrom: now.Add(m), sampleTo: now.Add(d - m), end: now.Add(d)}
}

func (w window) sampling(t time.Time) bool { return !t.Before(w.sampleFrom) && t.Before(w.sampleTo) }

// earlier returns the earlier of two times.
func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// rates fills a report's average bandwidth and message rate: n messages of size bytes in ns
// nanoseconds.
func rates(r *Report, size, n int, ns int64, gbits bool) {
	factor := float64(bytesPerMB)
	if gbits {
		factor = bytesPerGb
	}
	sec := float64(max(ns, 1)) / 1e9
	r.BWAvg = float64(size) * float64(n) / sec / factor
	r.MsgRate = float64(n) / sec / 1e6
}

func (r *rdma) bw(ctx context.Context, size int) (Report, error) {
	if r.p.Test.Verb == VerbSend && r.p.IsServer() {
		return r.bwReceiver(ctx, size)
	}
	return r.bwRequester(ctx, size)
}

// fillWR prepares message k of QP q (perftest's ctx_set_send_wqes with the address cycling of
// run_iter_bw).
func (r *rdma) fillWR(wr *gorxe.SendWR, sge []gorxe.SGE, q, k, size int, cyc cycle, signaled bool) {
	p := r.p
	off := cyc.offset(k)
	local := q*r.area + off
	*wr = gorxe.SendWR{ID: uint64(q)<<32 | uint64(uint32(k))}
	sge[0] = gorxe.SGE{Addr: r.mrAddr + uint64(local), Length: uint32(size), LKey: r.lkey}
	wr.SGList = sge[:1]
	if signaled {
		wr.Flags |= gorxe.SendSignaled
	}
	rem := &r.remote[q]
	switch p.Test.Verb {
	case VerbWrite:
		wr.Opcode = gorxe.WRRDMAWrite
		wr.RDMA = gorxe.RDMAInfo{RemoteAddr: rem.VAddr + uint64(off), RKey: rem.RKey}
	case VerbRead:
		wr.Opcode = gorxe.WRRDMARead
		wr.RDMA = gorxe.RDMAInfo{RemoteAddr: rem.VAddr + uint64(off), RKey: rem.RKey}
	case VerbAtomic:
		wr.Opcode = gorxe.WRAtomicFetchAndAdd
		wr.Atomic = gorxe.AtomicInfo{RemoteAddr: rem.VAddr + uint64(off), CompareAdd: atomicAddValue, RKey: rem.RKey}
		if p.AtomicType == CmpAndSwap {
			wr.Opcode = gorxe.WRAtomicCmpAndSwp
			wr.Atomic.CompareAdd, wr.Atomic.Swap = 0, atomicSwapValue
		}
	case VerbSend:
		wr.Opcode = gorxe.WRSend
		if p.Conn == UD {
			wr.UD = r.ud[q]
		}
	}
	if (p.Test.Verb == VerbSend || p.Test.Verb == VerbWrite) && size <= p.Inline {
		wr.Flags |= gorxe.SendInline
		wr.InlineData = r.mem[local : local+size]
		wr.SGList = nil
	}
}

// bwRequester is the sending side of a bandwidth test (perftest's run_iter_bw): it keeps up to
// the TX depth of messages outstanding on every QP, asks for a completion every CQ moderation
// messages, and timestamps posts and completions for the peak bandwidth.
func (r *rdma) bwRequester(ctx context.Context, size int) (Report, error) {
	p := r.p
	nq := len(r.qps)
	timed := p.Duration > 0
	iters := p.Iters
	if timed {
		iters = math.MaxInt32
	}
	tot := iters * nq
	noPeak := p.NoPeak || timed || !peakAffordable(tot, p.PostList, p.CQMod)
	var s bwSamples
	if noPeak {
		s.posted, s.completed = make([]int64, 1), make([]int64, 1)
	} else {
		s.posted, s.completed = make([]int64, tot), make([]int64, tot)
	}
	origin := time.Now()
	now := func() int64 { return int64(time.Since(origin)) + 1 }

	cyc := newCycle(size, r.neg.cycleBuffer, r.neg.cacheLine)
	wrs := make([]gorxe.SendWR, p.PostList)
	sges := make([]gorxe.SGE, p.PostList)
	wcs := make([]gorxe.WC, pollBatch)
	scnt, ccnt := make([]int, nq), make([]int, nq)
	totscnt, totccnt, sampled := 0, 0, 0
	w := newWaiter(ctx, p, r.requesterStall(size))
	defer w.close()
	var win window
	if timed {
		win = newWindow(p)
	} else if noPeak {
		s.posted[0] = now()
	}

	for {
		posting := !timed || time.Now().Before(win.end)
		if !posting || totscnt == tot {
			if timed || totccnt == tot {
				break
			}
		}
		for q := range nq {
			for posting && scnt[q] < iters {
				// The last list of a run whose iterations are not a multiple of the post list is
				// shorter: posting a whole one would send messages past the end, which the peer
				// of send_bw has no receives for and whose completions nobody waits for.
				n := min(p.PostList, iters-scnt[q])
				if scnt[q]-ccnt[q]+n > p.TxDepth {
					break
				}
				for j := range n {
					k := scnt[q] + j
					last := !timed && k == iters-1
					r.fillWR(&wrs[j], sges[j:j+1], q, k, size, cyc, (k+1)%p.CQMod == 0 || last)
				}
				if !noPeak {
					s.posted[totscnt] = now()
				}
				if err := r.qps[q].PostSend(wrs[:n]); err != nil {
					return Report{}, stepErr(err, "Couldn't post send: qp %d scnt=%d", q, scnt[q])
				}
				scnt[q] += n
				totscnt += n
			}
		}
		if totccnt == totscnt {
			continue
		}
		end := time.Time{}
		if timed {
			end = win.end
		}
		n, err := w.poll(r.sendCQ, r.sendCh, wcs, end)
		switch {
		case errors.Is(err, errEnd):
			continue
		case errors.Is(err, errStalled):
			return Report{}, fmt.Errorf("no completion for %v (%d of %d messages completed): is the peer still there?", w.stall.Round(time.Millisecond), totccnt, tot)
		case ctx.Err() != nil:
			// What completed so far is the result, as if the run had been that long.
			if timed {
				rep := Report{Size: uint64(size), Iters: uint64(sampled)}
				rates(&rep, size, sampled, int64(max(earlier(time.Now(), win.sampleTo).Sub(win.sampleFrom), 0)), p.ReportGbits)
				return rep, &InterruptedError{Done: sampled, Unit: "messages", Cause: context.Cause(ctx)}
			}
			rep := Report{Size: uint64(size), Iters: uint64(totccnt)}
			rates(&rep, size, totccnt, int64(time.Since(origin)), p.ReportGbits)
			return rep, &InterruptedError{Done: totccnt, Total: tot, Unit: "messages", Cause: context.Cause(ctx)}
		case err != nil:
			return Report{}, err
		}
		t := time.Now()
		for i := range wcs[:n] {
			wc := &wcs[i]
			if wc.Status != gorxe.WCSuccess {
				return Report{}, wcError("client", wc, totscnt, totccnt)
			}
			q, k := int(wc.WRID>>32), int(uint32(wc.WRID))
			if q >= nq || k < ccnt[q] {
				return Report{}, fmt.Errorf("unexpected completion wr_id %#x", wc.WRID)
			}
			covered := k + 1 - ccnt[q]
			ccnt[q] = k + 1
			totccnt += covered
			if timed && win.sampling(t) {
				sampled += covered
			}
			if !noPeak {
				idx := totccnt - 1
				if totccnt >= tot-1 {
					idx = tot - 1
				}
				s.completed[idx] = now()
			}
		}
	}
	if timed {
		rep := Report{Size: uint64(size), Iters: uint64(sampled)}
		rates(&rep, size, sampled, int64(win.sampleTo.Sub(win.sampleFrom)), p.ReportGbits)
		return rep, nil
	}
	if noPeak {
		s.completed[0] = now()
	}
	return bwReport(&s, size, tot, p.PostList, p.CQMod, noPeak, p.ReportGbits), nil
}

// postRecvs posts up to the RX depth of receives on every QP for messages of size bytes, never
// more than the run will consume (perftest's ctx_set_recv_wqes).
func (r *rdma) postRecvs(size int) error {
	p := r.p
	for q := range r.qps {
		r.rposted[q], r.rnext[q] = 0, 0
		n := p.RxDepth
		if p.Duration == 0 {
			n = min(n, p.Iters)
		}
		for range n {
			if err := r.postRecv(q, size); err != nil {
				return err
			}
		}
	}
	return nil
}

// postRecv posts one receive on QP q into the area the peer's messages land in; UD receives start
// with room for the 40-byte GRH, placed so that the message itself is cache-line aligned.
func (r *rdma) postRecv(q, size int) error { return r.postRecvN(q, 1, size) }

// postRecvN posts n (at most pollBatch) receives on QP q as one list, as postRecv would one by
// one: the send_bw receiver reposts what a poll batch consumed in one call.
func (r *rdma) postRecvN(q, n, size int) error {
	cyc := newCycle(size, r.neg.cycleBuffer, r.neg.cacheLine)
	addr, lkey := r.mrAddr, r.lkey
	wrs, sges := r.rwrs[:n], r.rsges[:n]
	for i := range wrs {
		off := (len(r.qps)+q)*r.area + cyc.offset(r.rnext[q]+i)
		length := size
		if r.p.Conn == UD {
			off += r.neg.cacheLine - gorxe.GRHSize
			length += gorxe.GRHSize
		}
		sges[i] = gorxe.SGE{Addr: addr + uint64(off), Length: uint32(length), LKey: lkey}
		wrs[i] = gorxe.RecvWR{ID: uint64(q), SGList: sges[i : i+1]}
	}
	if err := r.qps[q].PostRecv(wrs); err != nil {
		return stepErr(err, "Couldn't post recv Qp = %d: counter=%d", q, r.rposted[q])
	}
	r.rposted[q] += n
	r.rnext[q] += n
	return nil
}

// bwReceiver is the receiving side of send_bw (perftest's run_iter_bw_server): it counts
// messages, reposts receives while more are due, and measures from the first message to the last.
func (r *rdma) bwReceiver(ctx context.Context, size int) (Report, error) {
	p := r.p
	nq := len(r.qps)
	timed := p.Duration > 0
	tot := p.Iters * nq
	stall := r.stall(size)
	if p.Conn != RC {
		stall = min(stall, udStallTimeout)
	}
	w := newWaiter(ctx, p, stall)
	defer w.close()
	var win window
	if timed {
		win = newWindow(p)
	}
	wcs := make([]gorxe.WC, pollBatch)
	rcnt := make([]int, nq)
	// due counts the receives each QP is owed for the completions of the current poll batch;
	// touched lists the QPs with some.
	due := make([]int, nq)
	touched := make([]int, 0, pollBatch)
	var first, last time.Time
	totrcnt, sampled := 0, 0
	for timed || totrcnt < tot {
		end := time.Time{}
		if timed {
			end = win.end
		}
		n, err := w.poll(r.recvCQ, r.recvCh, wcs, end)
		switch {
		case errors.Is(err, errEnd):
			rep := Report{Size: uint64(size), Iters: uint64(sampled)}
			rates(&rep, size, sampled, int64(win.sampleTo.Sub(win.sampleFrom)), p.ReportGbits)
			return rep, nil
		case errors.Is(err, errStalled) && p.Conn != RC && totrcnt > 0:
			r.warn(fmt.Sprintf("Did not get Message for %v, exiting..\n Total Received=%d, Total Iters Required=%d", stall.Round(time.Millisecond), totrcnt, tot))
			rep := Report{Size: uint64(size), Iters: uint64(totrcnt)}
			rates(&rep, size, totrcnt, int64(last.Sub(first)), p.ReportGbits)
			return rep, nil
		case errors.Is(err, errStalled):
			return Report{}, fmt.Errorf("no message for %v (%d of %d received): is the peer still sending?", stall.Round(time.Millisecond), totrcnt, tot)
		case ctx.Err() != nil:
			rep := Report{Size: uint64(size), Iters: uint64(totrcnt)}
			rates(&rep, size, totrcnt, int64(last.Sub(first)), p.ReportGbits)
			total := tot
			if timed {
				total = 0
			}
			return rep, &InterruptedError{Done: totrcnt, Total: total, Unit: "messages", Cause: context.Cause(ctx)}
		case err != nil:
			return Report{}, err
		}
		t := time.Now()
		for i := range wcs[:n] {
			wc := &wcs[i]
			if wc.Status != gorxe.WCSuccess {
				return Report{}, wcError("server", wc, totrcnt, totrcnt)
			}
			q := int(wc.WRID)
			if q >= nq {
				return Report{}, fmt.Errorf("unexpected completion wr_id %#x", wc.WRID)
			}
			if totrcnt == 0 {
				first = t
			}
			rcnt[q]++
			totrcnt++
			if timed && win.sampling(t) {
				sampled++
			}
			if timed || r.rposted[q]+due[q] < p.Iters {
				if due[q] == 0 {
					touched = append(touched, q)
				}
				due[q]++
			}
		}
		for _, q := range touched {
			if err := r.postRecvN(q, due[q], size); err != nil {
				return Report{}, err
			}
			due[q] = 0
		}
		touched = touched[:0]
		last = t
	}
	rep := Report{Size: uint64(size), Iters: uint64(tot)}
	rates(&rep, size, tot, int64(last.Sub(first)), p.ReportGbits)
	return rep, nil
}
