package qp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		require.NoError(e.t, err)
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
			err := postSend(q, []SendWR{validWR(e, typ, op)})
			if want {
				assert.NoError(t, err, "%v on %v", op, typ)
			} else {
				assert.ErrorIs(t, err, ErrInvalidOpcode, "%v on %v", op, typ)
			}
			assert.Equal(t, want, op.AllowedOn(typ), "AllowedOn(%v, %v)", op, typ)
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
		{"ud destroyed ah", TypeUD, func(_ *env, wr *SendWR) { _ = wr.UD.AH.(*AH).Destroy() }, ErrInvalidAH},
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
			err := postSend(q, []SendWR{good, wr, good})
			if c.want == nil {
				require.NoError(t, err)
				return
			}
			var pe *PostError
			require.ErrorIs(t, err, c.want)
			require.ErrorAs(t, err, &pe)
			require.Equal(t, 1, pe.Index, "index of the bad request")
			require.Equal(t, "post_send", pe.Op)
			_, _, tail := q.SendQueue().Positions()
			require.Equal(t, uint64(1), tail, "WQEs posted: only the one before the bad request")
		})
	}
}

func TestPostSendStates(t *testing.T) {
	for _, s := range []State{StateReset, StateInit, StateRTR, StateRTS, StateSQD, StateSQE, StateErr} {
		e := newEnv(t)
		q := placeIn(e, TypeUC, s)
		wr := validWR(e, TypeUC, WRSend)
		wr.Flags = 0 // unsignaled: flushes still complete
		err := postSend(q, []SendWR{wr})
		switch s {
		case StateReset, StateInit, StateRTR:
			assert.ErrorIs(t, err, ErrInvalidState, "post in %v", s)
		case StateRTS, StateSQD:
			assert.NoError(t, err, "post in %v", s)
			_, _, tail := q.SendQueue().Positions()
			assert.Equal(t, uint64(1), tail, "tail after a post in %v", s)
		case StateSQE, StateErr:
			wcs := poll(q.SendCQ())
			assert.NoError(t, err, "post in %v", s)
			if assert.Len(t, wcs, 1, "completions of a post in %v", s) {
				assert.Equal(t, cq.WCWRFlushErr, wcs[0].Status, "completion of a post in %v", s)
				assert.Equal(t, wr.ID, wcs[0].WRID, "completion of a post in %v", s)
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
	err := postSend(q, wrs)
	require.ErrorIs(t, err, ErrQueueFull, "send")
	require.ErrorAs(t, err, &pe, "send")
	require.Equal(t, 8, pe.Index, "send: index of the first request that did not fit")
	rwrs := make([]RecvWR, 9)
	err = q.PostRecv(rwrs)
	require.ErrorIs(t, err, ErrQueueFull, "recv")
	require.ErrorAs(t, err, &pe, "recv")
	require.Equal(t, 8, pe.Index, "recv: index of the first request that did not fit")
	// Retiring one WQE makes no room until its completion is polled; then exactly one more fits.
	w, _ := q.SendQueue().StartNext()
	require.NoError(t, q.SendQueue().Complete(w.Index, cq.WCSuccess, 0))
	require.ErrorIs(t, postSend(q, wrs[:1]), ErrQueueFull, "completion generated, not polled")
	require.Len(t, poll(q.SendCQ()), 1)
	require.NoError(t, postSend(q, wrs[:1]))
	require.ErrorIs(t, postSend(q, wrs[:1]), ErrQueueFull)
	// A QP created without a send queue cannot post sends.
	q0 := e.qp(TypeRC, Caps{MaxRecvWR: 1})
	e.to(q0, StateRTS)
	require.ErrorIs(t, postSend(q0, []SendWR{{Opcode: WRSend}}), ErrQueueFull, "zero-capacity queue")
}

func TestPostRecvRules(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps())
	require.ErrorIs(t, q.PostRecv([]RecvWR{{ID: 1}}), ErrInvalidState, "RESET")
	e.to(q, StateInit)
	require.ErrorIs(t, q.PostRecv([]RecvWR{{ID: 1, SGList: make([]mr.SGE, 5)}}), ErrTooManySGE, "sges")
	require.NoError(t, q.PostRecv([]RecvWR{{ID: 1, SGList: sge(100)}}), "INIT")
	var w RecvWQE
	require.False(t, q.PopRecv(&w), "receive WQE handed out in INIT")
	e.to(q, StateRTR)
	require.True(t, q.PopRecv(&w), "pop in RTR")
	require.Equal(t, uint64(1), w.ID, "popped WQE")
	require.Equal(t, uint64(100), w.Length, "popped WQE")
	require.Equal(t, sge(100), w.SGL, "popped WQE")
	srq, err := e.table.CreateSRQ(e.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}})
	require.NoError(t, err)
	qs, err := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(4), RecvCQ: e.cq(4), SRQ: srq, Cap: defaultCaps()})
	require.NoError(t, err)
	e.to(qs, StateInit)
	require.ErrorIs(t, qs.PostRecv([]RecvWR{{ID: 1}}), ErrHasSRQ, "QP with SRQ")
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
	require.NoError(t, postSend(q, wrs))
	data[0], sges[0].Length = 'X', 1 // the caller's buffers may change right after posting
	w1, _ := q.SendQueue().StartNext()
	w2, _ := q.SendQueue().StartNext()
	require.Equal(t, "hello", string(w1.WR.InlineData), "inline WQE")
	require.Equal(t, uint64(5), w1.Length, "inline WQE")
	require.Empty(t, w1.WR.SGList, "inline WQE")
	require.Equal(t, uint32(33), w2.WR.SGList[0].Length, "write WQE")
	require.Equal(t, uint64(33), w2.Length, "write WQE")
	require.Equal(t, uint32(0xdeadbeef), w2.WR.ImmData, "write WQE")
	require.Equal(t, uint32(7), w2.WR.RDMA.RKey, "write WQE")
	require.Equal(t, uint64(1), w2.Index, "write WQE")
	_, ok := q.SendQueue().StartNext()
	require.False(t, ok, "third WQE")
}

// TestPostSendReportsIdle: PostSend reports whether a WQE was in flight (started, not completed)
// when it ended, which decides whether the poster may run the requester itself.
func TestPostSendReportsIdle(t *testing.T) {
	e := newEnv(t)
	q := e.qp(TypeRC, defaultCaps())
	e.to(q, StateRTS)
	wr := []SendWR{validWR(e, TypeRC, WRSend)}
	idle, err := q.PostSend(wr)
	require.NoError(t, err)
	assert.True(t, idle, "first post")
	idle, err = q.PostSend(wr)
	require.NoError(t, err)
	assert.True(t, idle, "two posted, none started")
	sq := q.SendQueue()
	w, _ := sq.StartNext()
	idle, err = q.PostSend(wr)
	require.NoError(t, err)
	assert.False(t, idle, "one started and not completed")
	require.NoError(t, sq.Complete(w.Index, cq.WCSuccess, 0))
	idle, err = q.PostSend(wr)
	require.NoError(t, err)
	assert.True(t, idle, "the started one completed")
}
