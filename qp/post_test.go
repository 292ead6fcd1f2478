package qp

import (
	"errors"
	"testing"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
)

func sge(n uint32) []mr.SGE { return []mr.SGE{{Addr: 0x1000, Length: n, LKey: 0x100}} }

// validWR returns a work request of opcode op that is well formed for a QP of type typ.
func validWR(e *env, typ Type, op WROpcode) SendWR {
	wr := SendWR{ID: uint64(op) + 1, Opcode: op, Flags: SendSignaled, SGList: sge(8)}
	switch op {
	case WRAtomicCmpAndSwp, WRAtomicFetchAndAdd:
		wr.Atomic = AtomicInfo{RemoteAddr: 0x2000, RKey: 5}
	case WRFlush:
		wr.Flush = FlushInfo{Type: FlushGlobal, Level: mr.FlushRange, Length: 64}
	}
	if typ.datagram() {
		ah, err := e.table.CreateAH(e.pd, new(testAV()))
		if err != nil {
			e.t.Fatal(err)
		}
		wr.UD = UDInfo{AH: ah, RemoteQPN: 0x99, RemoteQKey: 0x1234}
	}
	return wr
}

// TestOpcodePerType checks the facts table: which opcodes each QP type accepts at post time.
func TestOpcodePerType(t *testing.T) {
	allowed := map[WROpcode][]Type{
		WRRDMAWrite:         {TypeRC, TypeUC},
		WRRDMAWriteWithImm:  {TypeRC, TypeUC},
		WRSend:              {TypeGSI, TypeRC, TypeUC, TypeUD},
		WRSendWithImm:       {TypeGSI, TypeRC, TypeUC, TypeUD},
		WRRDMARead:          {TypeRC},
		WRAtomicCmpAndSwp:   {TypeRC},
		WRAtomicFetchAndAdd: {TypeRC},
		WRLocalInv:          {TypeRC},
		WRBindMW:            {TypeRC, TypeUC},
		WRSendWithInv:       {TypeRC, TypeUC, TypeUD},
		WRTSO:               nil,
		WRDriver1:           nil,
		WRFlush:             {TypeRC},
		WRAtomicWrite:       {TypeRC},
		WRRegMR:             {TypeRC},
		WROpcode(12):        nil,
		WROpcode(200):       nil,
	}
	for op, types := range allowed {
		for _, typ := range allTypesList {
			want := false
			for _, a := range types {
				want = want || a == typ
			}
			e := newEnv(t)
			q := e.qp(typ, defaultCaps())
			e.to(q, StateRTS)
			err := q.PostSend([]SendWR{validWR(e, typ, op)})
			if want && err != nil {
				t.Errorf("%v on %v: %v", op, typ, err)
			}
			if !want && !errors.Is(err, ErrInvalidOpcode) {
				t.Errorf("%v on %v: got %v, want ErrInvalidOpcode", op, typ, err)
			}
			if op.AllowedOn(typ) != want {
				t.Errorf("AllowedOn(%v, %v) = %v", op, typ, !want)
			}
		}
	}
}

func TestPostSendValidation(t *testing.T) {
	caps := defaultCaps()
	cases := []struct {
		name string
		typ  Type
		edit func(e *env, wr *SendWR)
		want error
	}{
		{"ok", TypeRC, func(*env, *SendWR) {}, nil},
		{"too many sges", TypeRC, func(_ *env, wr *SendWR) { wr.SGList = make([]mr.SGE, caps.MaxSendSGE+1) }, ErrTooManySGE},
		{"max sges", TypeRC, func(_ *env, wr *SendWR) { wr.SGList = make([]mr.SGE, caps.MaxSendSGE) }, nil},
		{"inline max", TypeRC, func(_ *env, wr *SendWR) {
			wr.Flags |= SendInline
			wr.SGList, wr.InlineData = nil, make([]byte, caps.MaxInlineData)
		}, nil},
		{"inline too long", TypeRC, func(_ *env, wr *SendWR) {
			wr.Flags |= SendInline
			wr.SGList, wr.InlineData = nil, make([]byte, caps.MaxInlineData+1)
		}, ErrInlineTooLong},
		{"inline with sges", TypeRC, func(_ *env, wr *SendWR) { wr.Flags |= SendInline; wr.InlineData = []byte{1} }, ErrInvalidWR},
		{"inline data without flag", TypeRC, func(_ *env, wr *SendWR) { wr.InlineData = []byte{1} }, ErrInvalidWR},
		{"inline read", TypeRC, func(_ *env, wr *SendWR) { wr.Opcode, wr.Flags, wr.SGList = WRRDMARead, SendInline, nil }, ErrInvalidWR},
		{"message 2^31", TypeRC, func(_ *env, wr *SendWR) { wr.SGList = []mr.SGE{{Length: 1 << 31}} }, nil},
		{"message too long", TypeRC, func(_ *env, wr *SendWR) { wr.SGList = []mr.SGE{{Length: 1 << 31}, {Length: 1}} }, ErrMessageTooLong},
		{"atomic length", TypeRC, func(_ *env, wr *SendWR) { wr.Opcode, wr.SGList = WRAtomicFetchAndAdd, sge(4) }, ErrInvalidWR},
		{"atomic misaligned", TypeRC, func(_ *env, wr *SendWR) { wr.Opcode, wr.Atomic.RemoteAddr = WRAtomicCmpAndSwp, 0x1004 }, ErrInvalidWR},
		{"atomic write misaligned", TypeRC, func(_ *env, wr *SendWR) { wr.Opcode, wr.RDMA.RemoteAddr = WRAtomicWrite, 3 }, ErrInvalidWR},
		{"flush without type", TypeRC, func(_ *env, wr *SendWR) { wr.Opcode = WRFlush }, ErrInvalidWR},
		{"ud ok", TypeUD, func(*env, *SendWR) {}, nil},
		{"ud no ah", TypeUD, func(_ *env, wr *SendWR) { wr.UD.AH = nil }, ErrInvalidAH},
		{"ud nil ah in a wrapper", TypeUD, func(_ *env, wr *SendWR) { wr.UD.AH = (*AH)(nil) }, ErrInvalidAH},
		{"ud destroyed ah", TypeUD, func(_ *env, wr *SendWR) { _ = wr.UD.AH.Handle().Destroy() }, ErrInvalidAH},
		{"ud ah of other pd", TypeUD, func(e *env, wr *SendWR) {
			pd, _ := e.mrs.AllocPD()
			wr.UD.AH, _ = e.table.CreateAH(pd, new(testAV()))
		}, ErrPDMismatch},
		{"ud bad remote qpn", TypeUD, func(_ *env, wr *SendWR) { wr.UD.RemoteQPN = 1 << 24 }, ErrInvalidWR},
		{"ud longer than mtu", TypeUD, func(_ *env, wr *SendWR) { wr.SGList = sge(4097) }, ErrMessageTooLong},
		{"gsi pkey index", TypeGSI, func(_ *env, wr *SendWR) { wr.UD.PKeyIndex = 64 }, ErrInvalidWR},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			q := e.qp(c.typ, caps)
			e.to(q, StateRTS)
			wr := validWR(e, c.typ, WRSend)
			c.edit(e, &wr)
			good := validWR(e, c.typ, WRSend)
			err := q.PostSend([]SendWR{good, wr, good})
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var pe *PostError
			if !errors.Is(err, c.want) || !errors.As(err, &pe) || pe.Index != 1 || pe.Op != "post_send" {
				t.Fatalf("got %v, want %v at index 1", err, c.want)
			}
			if _, _, tail := q.SendQueue().Positions(); tail != 1 {
				t.Fatalf("%d WQEs posted, want only the one before the bad request", tail)
			}
		})
	}
}

func TestPostSendStates(t *testing.T) {
	for _, s := range []State{StateReset, StateInit, StateRTR, StateRTS, StateSQD, StateSQE, StateErr} {
		e := newEnv(t)
		q := placeIn(e, TypeUC, s)
		wr := validWR(e, TypeUC, WRSend)
		wr.Flags = 0 // unsignaled: flushes still complete
		err := q.PostSend([]SendWR{wr})
		switch s {
		case StateReset, StateInit, StateRTR:
			if !errors.Is(err, ErrInvalidState) {
				t.Errorf("%v: %v", s, err)
			}
		case StateRTS, StateSQD:
			if _, _, tail := q.SendQueue().Positions(); err != nil || tail != 1 {
				t.Errorf("%v: %v, tail %d", s, err, tail)
			}
		case StateSQE, StateErr:
			wcs := poll(q.SendCQ())
			if err != nil || len(wcs) != 1 || wcs[0].Status != cq.WCWRFlushErr || wcs[0].WRID != wr.ID {
				t.Errorf("%v: %v %+v", s, err, wcs)
			}
		}
	}
}

func TestQueueFull(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps())
	e.to(q, StateRTS)
	wrs := make([]SendWR, 9)
	for i := range wrs {
		wrs[i] = validWR(e, TypeRC, WRSend)
	}
	var pe *PostError
	if err := q.PostSend(wrs); !errors.Is(err, ErrQueueFull) || !errors.As(err, &pe) || pe.Index != 8 {
		t.Fatalf("send: %v", err)
	}
	rwrs := make([]RecvWR, 9)
	if err := q.PostRecv(rwrs); !errors.Is(err, ErrQueueFull) || !errors.As(err, &pe) || pe.Index != 8 {
		t.Fatalf("recv: %v", err)
	}
	// Retiring one WQE makes room for exactly one more.
	w, _ := q.SendQueue().StartNext()
	if err := q.SendQueue().Complete(w.Index, cq.WCSuccess, 0); err != nil {
		t.Fatal(err)
	}
	if err := q.PostSend(wrs[:1]); err != nil {
		t.Fatal(err)
	}
	if err := q.PostSend(wrs[:1]); !errors.Is(err, ErrQueueFull) {
		t.Fatal(err)
	}
	// A QP created without a send queue cannot post sends.
	q0 := e.qp(TypeRC, Caps{MaxRecvWR: 1})
	e.to(q0, StateRTS)
	if err := q0.PostSend([]SendWR{{Opcode: WRSend}}); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("zero-capacity queue: %v", err)
	}
}

func TestPostRecvRules(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps())
	if err := q.PostRecv([]RecvWR{{ID: 1}}); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("RESET: %v", err)
	}
	e.to(q, StateInit)
	if err := q.PostRecv([]RecvWR{{ID: 1, SGList: make([]mr.SGE, 5)}}); !errors.Is(err, ErrTooManySGE) {
		t.Fatalf("sges: %v", err)
	}
	if err := q.PostRecv([]RecvWR{{ID: 1, SGList: sge(100)}}); err != nil {
		t.Fatalf("INIT: %v", err)
	}
	var w RecvWQE
	if q.PopRecv(&w) {
		t.Fatal("receive WQE handed out in INIT")
	}
	e.to(q, StateRTR)
	if !q.PopRecv(&w) || w.ID != 1 || w.Length != 100 || len(w.SGL) != 1 || w.SGL[0] != sge(100)[0] {
		t.Fatalf("popped %+v", w)
	}
	srq, err := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}})
	if err != nil {
		t.Fatal(err)
	}
	qs, err := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(4), RecvCQ: e.cq(4), SRQ: srq, Cap: defaultCaps()})
	if err != nil {
		t.Fatal(err)
	}
	e.to(qs, StateInit)
	if err := qs.PostRecv([]RecvWR{{ID: 1}}); !errors.Is(err, ErrHasSRQ) {
		t.Fatalf("QP with SRQ: %v", err)
	}
}

func TestInlineAndSGEsCopied(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps())
	e.to(q, StateRTS)
	data := []byte("hello")
	sges := sge(33)
	wrs := []SendWR{
		{ID: 1, Opcode: WRSend, Flags: SendInline, InlineData: data},
		{ID: 2, Opcode: WRRDMAWriteWithImm, SGList: sges, ImmData: 0xdeadbeef, RDMA: RDMAInfo{RemoteAddr: 9, RKey: 7}},
	}
	if err := q.PostSend(wrs); err != nil {
		t.Fatal(err)
	}
	data[0], sges[0].Length = 'X', 1 // the caller's buffers may change right after posting
	w1, _ := q.SendQueue().StartNext()
	w2, _ := q.SendQueue().StartNext()
	if string(w1.WR.InlineData) != "hello" || w1.Length != 5 || len(w1.WR.SGList) != 0 {
		t.Fatalf("inline WQE %+v", w1)
	}
	if w2.WR.SGList[0].Length != 33 || w2.Length != 33 || w2.WR.ImmData != 0xdeadbeef || w2.WR.RDMA.RKey != 7 || w2.Index != 1 {
		t.Fatalf("write WQE %+v", w2)
	}
	if _, ok := q.SendQueue().StartNext(); ok {
		t.Fatal("third WQE")
	}
}
