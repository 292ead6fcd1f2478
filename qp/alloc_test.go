package qp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
)

func TestHotPathsDoNotAllocate(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps())
	e.to(q, StateRTS)
	ud := e.qp(TypeUD, defaultCaps())
	e.to(ud, StateRTS)
	wr := validWR(e, TypeRC, WRSend)
	inline := SendWR{ID: 2, Opcode: WRSend, Flags: SendInline | SendSignaled, InlineData: make([]byte, 32)}
	udwr := validWR(e, TypeUD, WRSendWithImm)
	sends := []SendWR{wr, inline}
	udSends := []SendWR{udwr}
	recvs := []RecvWR{{ID: 1, SGList: []mr.SGE{{Addr: 1, Length: 64, LKey: 2}}}}
	var rw RecvWQE
	wcs := make([]cq.WC, 8)
	sq, usq := q.SendQueue(), ud.SendQueue()
	run := func() {
		if err := postSend(q, sends); err != nil {
			t.Fatal(err)
		}
		if err := postSend(ud, udSends); err != nil {
			t.Fatal(err)
		}
		if err := q.PostRecv(recvs); err != nil {
			t.Fatal(err)
		}
		for {
			w, ok := sq.StartNext()
			if !ok {
				break
			}
			_ = sq.Complete(w.Index, cq.WCSuccess, 0)
		}
		w, _ := usq.StartNext()
		_ = usq.Complete(w.Index, cq.WCSuccess, 0)
		q.PopRecv(&rw)
		wc := cq.WC{Opcode: cq.OpcodeRecv, ByteLen: 10}
		_ = q.CompleteRecv(&rw, &wc, false)
		q.SendCQ().Poll(wcs)
		q.RecvCQ().Poll(wcs)
		ud.SendCQ().Poll(wcs)
	}
	run() // the first pop sizes rw.SGL
	require.Zero(t, testing.AllocsPerRun(1000, run), "allocations per run of post/start/complete/pop/poll")
}

// BenchmarkPostSendComplete posts a signaled SEND, starts and completes it, and polls its
// completion, which frees its slot.
func BenchmarkPostSendComplete(b *testing.B) {
	e := newEnv(&testing.T{})
	q := e.qp(TypeRC, Caps{MaxSendWR: 64, MaxSendSGE: 1, MaxRecvWR: 1})
	e.to(q, StateRTS)
	wrs := []SendWR{{Opcode: WRSend, Flags: SendSignaled, SGList: []mr.SGE{{Length: 64}}}}
	sq := q.SendQueue()
	wcs := make([]cq.WC, 1)
	b.ReportAllocs()
	for b.Loop() {
		if err := postSend(q, wrs); err != nil {
			b.Fatal(err)
		}
		w, _ := sq.StartNext()
		_ = sq.Complete(w.Index, cq.WCSuccess, 0)
		q.SendCQ().Poll(wcs)
	}
}
