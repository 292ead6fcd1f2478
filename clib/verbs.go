//go:build gorxe_clib

package main

/*
#include <stdlib.h>
#include "clib.h"
*/
import "C"

import (
	"errors"
	"sync"
	"syscall"
	"unsafe"

	"github.com/gorxe/gorxe"
)

// The Go side of each C object, keyed by the C object's address. The C structs hold no Go
// pointers (cgo forbids C keeping them); Go keeps C addresses as plain keys.
type (
	cqState struct {
		ctx *C.struct_ibv_context // the context that created it, for its events
		cq  *gorxe.CQ
		dev *gorxe.Device
	}
	qpState struct {
		ctx  *C.struct_ibv_context
		qp   *gorxe.QP
		feed *qpFeed
		mu   sync.Mutex // guards the post scratch below
		posts
	}
	srqState struct {
		ctx *C.struct_ibv_context
		srq *gorxe.SRQ
		mu  sync.Mutex
		posts
	}
	// posts is the scratch a post converts C work requests into, reused so a post allocates
	// nothing once the buffers have grown.
	posts struct {
		send []gorxe.SendWR
		recv []gorxe.RecvWR
		sges []gorxe.SGE
	}
)

// objectTable maps the program's objects to gorxe's and back, for the verbs and for events.
type objectTable struct {
	mu    sync.RWMutex
	pds   map[*C.struct_ibv_pd]*gorxe.PD
	mrs   map[*C.struct_ibv_mr]*gorxe.MR
	mws   map[*C.struct_ibv_mw]*gorxe.MW
	chans map[*C.struct_ibv_comp_channel]*chanState
	cqs   map[*C.struct_ibv_cq]*cqState
	qps   map[*C.struct_ibv_qp]*qpState
	srqs  map[*C.struct_ibv_srq]*srqState
	ahs   map[*C.struct_ibv_ah]*gorxe.AH
	// the way back, for completion and asynchronous events
	cqC  map[*gorxe.CQ]*C.struct_ibv_cq
	qpC  map[*gorxe.QP]*C.struct_ibv_qp
	srqC map[*gorxe.SRQ]*C.struct_ibv_srq
	// handle numbers objects (ibv_pd.handle, ...), unique in the process
	handle uint32
}

var objects = objectTable{
	pds: map[*C.struct_ibv_pd]*gorxe.PD{}, mrs: map[*C.struct_ibv_mr]*gorxe.MR{}, mws: map[*C.struct_ibv_mw]*gorxe.MW{},
	chans: map[*C.struct_ibv_comp_channel]*chanState{}, cqs: map[*C.struct_ibv_cq]*cqState{},
	qps: map[*C.struct_ibv_qp]*qpState{}, srqs: map[*C.struct_ibv_srq]*srqState{},
	ahs: map[*C.struct_ibv_ah]*gorxe.AH{}, cqC: map[*gorxe.CQ]*C.struct_ibv_cq{},
	qpC: map[*gorxe.QP]*C.struct_ibv_qp{}, srqC: map[*gorxe.SRQ]*C.struct_ibv_srq{},
}

func (t *objectTable) nextHandle() C.uint32_t {
	t.handle++
	return C.uint32_t(t.handle)
}

func lookup[K comparable, V any](t *objectTable, m map[K]V, k K) V {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return m[k]
}

// release is every destroy verb: it finds the object k names in m, frees it with free and, once
// that succeeded, forgets it (and runs forget, under the table's lock, for the reverse maps). An
// unknown k is errBadObject; a failed free leaves the object known and returns its errno.
func release[K comparable, V any](t *objectTable, m map[K]V, k K, free func(V) error, forget func(V)) C.int {
	t.mu.RLock()
	v, ok := m[k]
	t.mu.RUnlock()
	if !ok {
		return C.int(errBadObject)
	}
	if err := free(v); err != nil {
		return errnoOf(err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(m, k)
	if forget != nil {
		forget(v)
	}
	return 0
}

// cqHandle returns the handle of c's C object, read under the table's lock, which C frees only
// after gx_destroy_cq took c out of the table.
func (t *objectTable) cqHandle(c *gorxe.CQ) (C.uint32_t, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if p := t.cqC[c]; p != nil {
		return p.handle, true
	}
	return 0, false
}

// eventTarget returns the element of an asynchronous event as ibv_async_event carries it (the C
// object's address, or the port number) and the context that created the object (nil for a port
// or device event); ok is false when the object is gone already and nobody is to be told.
func (t *objectTable) eventTarget(ev gorxe.AsyncEvent) (elem uint64, owner *C.struct_ibv_context, ok bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	switch {
	case ev.QP != nil:
		if q := t.qpC[ev.QP]; q != nil {
			return uint64(uintptr(unsafe.Pointer(q))), t.qps[q].ctx, true
		}
	case ev.SRQ != nil:
		if s := t.srqC[ev.SRQ]; s != nil {
			return uint64(uintptr(unsafe.Pointer(s))), t.srqs[s].ctx, true
		}
	case ev.CQ != nil:
		if c := t.cqC[ev.CQ]; c != nil {
			return uint64(uintptr(unsafe.Pointer(c))), t.cqs[c].ctx, true
		}
	default:
		return uint64(ev.Port), nil, true
	}
	return 0, nil, false
}

// errBadObject answers a verb given an object the library does not know (never created, or
// destroyed), as libibverbs answers a bad handle.
var errBadObject = syscall.EINVAL

// deviceOf returns the bound device of a context.
func deviceOf(c *C.struct_ibv_context) (*gorxe.Device, C.int) {
	dc := contextOf(c)
	if dc == nil {
		return nil, C.int(errBadObject)
	}
	d, err := dc.device()
	if err != nil {
		return nil, errnoOf(err)
	}
	return d, 0
}

//export gx_alloc_pd
func gx_alloc_pd(pd *C.struct_ibv_pd) (rc C.int) {
	defer catch("alloc_pd", &rc)
	d, rc := deviceOf(pd.context)
	if rc != 0 {
		return rc
	}
	p, err := d.AllocPD()
	if err != nil {
		return errnoOf(err)
	}
	objects.mu.Lock()
	defer objects.mu.Unlock()
	objects.pds[pd] = p
	pd.handle = objects.nextHandle()
	return 0
}

//export gx_dealloc_pd
func gx_dealloc_pd(pd *C.struct_ibv_pd) (rc C.int) {
	defer catch("dealloc_pd", &rc)
	objects.mu.Lock()
	rc, done := deallocParentDomain(pd)
	objects.mu.Unlock()
	if done {
		return rc
	}
	return release(&objects, objects.pds, pd, (*gorxe.PD).Dealloc, nil)
}

// gx_reg_mr registers the program's own memory [mr->addr, +mr->length) in place: gorxe reads and
// writes it directly, as a NIC's DMA would.
//
//export gx_reg_mr
func gx_reg_mr(m *C.struct_ibv_mr, iova C.uint64_t, access C.uint) (rc C.int) {
	defer catch("reg_mr", &rc)
	p := lookup(&objects, objects.pds, m.pd)
	if p == nil || m.addr == nil || m.length == 0 || uint64(m.length) > 1<<47 {
		return C.int(syscall.EINVAL)
	}
	buf := unsafe.Slice((*byte)(m.addr), int(m.length))
	var r *gorxe.MR
	var err error
	if uint64(iova) == uint64(uintptr(m.addr)) {
		r, err = p.RegMR(buf, gorxe.Access(access))
	} else {
		r, err = p.RegMRIOVA(buf, uint64(iova), gorxe.Access(access))
	}
	if err != nil {
		return errnoOf(err)
	}
	objects.mu.Lock()
	defer objects.mu.Unlock()
	objects.mrs[m] = r
	m.lkey, m.rkey = C.uint32_t(r.LKey()), C.uint32_t(r.RKey())
	m.handle = objects.nextHandle()
	return 0
}

// gx_rereg_mr changes the region as flags say (C checked the input) and keeps ibv_mr's fields
// true; its keys stay.
//
//export gx_rereg_mr
func gx_rereg_mr(m *C.struct_ibv_mr, flags C.int, pd *C.struct_ibv_pd, addr unsafe.Pointer, length C.size_t, access C.uint) (rc C.int) {
	defer catch("rereg_mr", &rc)
	r := lookup(&objects, objects.mrs, m)
	if r == nil {
		return C.int(syscall.EINVAL)
	}
	var p *gorxe.PD
	if flags&C.IBV_REREG_MR_CHANGE_PD != 0 {
		if p = lookup(&objects, objects.pds, pd); p == nil {
			return C.int(syscall.EINVAL)
		}
	}
	var buf []byte
	if flags&C.IBV_REREG_MR_CHANGE_TRANSLATION != 0 {
		buf = unsafe.Slice((*byte)(addr), int(length))
	}
	if err := r.Rereg(gorxe.ReregFlags(flags), p, buf, gorxe.Access(access)); err != nil {
		return errnoOf(err)
	}
	if p != nil {
		m.pd = pd
	}
	if buf != nil {
		m.addr, m.length = addr, length
	}
	m.lkey, m.rkey = C.uint32_t(r.LKey()), C.uint32_t(r.RKey())
	return 0
}

//export gx_dereg_mr
func gx_dereg_mr(m *C.struct_ibv_mr) (rc C.int) {
	defer catch("dereg_mr", &rc)
	return release(&objects, objects.mrs, m, (*gorxe.MR).Dereg, nil)
}

// gx_create_cq creates the CQ with its completions going to the ring C allocated (ring.c polls
// it).
//
//export gx_create_cq
func gx_create_cq(cq *C.struct_ibv_cq, cqe C.int, hdr *C.struct_gx_ring_header, ents *C.struct_gx_ring_entry) (rc C.int) {
	defer catch("create_cq", &rc)
	d, rc := deviceOf(cq.context)
	if rc != 0 {
		return rc
	}
	var ch *gorxe.CompChannel
	if cq.channel != nil {
		cs := lookup(&objects, objects.chans, cq.channel)
		if cs == nil {
			return C.int(syscall.EINVAL)
		}
		ch = cs.c
	}
	c, err := d.CreateCQOnRing(ringOf(hdr, ents, cqe), ch)
	if err != nil {
		return errnoOf(err)
	}
	objects.mu.Lock()
	defer objects.mu.Unlock()
	objects.cqs[cq] = &cqState{ctx: cq.context, cq: c, dev: d}
	objects.cqC[c] = cq
	cq.cqe = C.int(c.CQE())
	cq.handle = objects.nextHandle()
	return 0
}

//export gx_destroy_cq
func gx_destroy_cq(cq *C.struct_ibv_cq) (rc C.int) {
	defer catch("destroy_cq", &rc)
	return release(&objects, objects.cqs, cq, func(s *cqState) error { return s.cq.Destroy() }, func(s *cqState) { delete(objects.cqC, s.cq) })
}

// gx_resize_cq moves the CQ's completions to a new ring; C holds its pollers off meanwhile.
//
//export gx_resize_cq
func gx_resize_cq(cq *C.struct_ibv_cq, cqe C.int, hdr *C.struct_gx_ring_header, ents *C.struct_gx_ring_entry) (rc C.int) {
	defer catch("resize_cq", &rc)
	s := lookup(&objects, objects.cqs, cq)
	if s == nil {
		return C.int(errBadObject)
	}
	if err := s.cq.ResizeRing(ringOf(hdr, ents, cqe)); err != nil {
		return errnoOf(err)
	}
	cq.cqe = cqe
	return 0
}

func capsOf(c C.struct_ibv_qp_cap) gorxe.QPCap {
	return gorxe.QPCap{MaxSendWR: int(c.max_send_wr), MaxRecvWR: int(c.max_recv_wr), MaxSendSGE: int(c.max_send_sge),
		MaxRecvSGE: int(c.max_recv_sge), MaxInlineData: int(c.max_inline_data)}
}

func setCaps(dst *C.struct_ibv_qp_cap, c gorxe.QPCap) {
	dst.max_send_wr, dst.max_recv_wr = C.uint32_t(c.MaxSendWR), C.uint32_t(c.MaxRecvWR)
	dst.max_send_sge, dst.max_recv_sge = C.uint32_t(c.MaxSendSGE), C.uint32_t(c.MaxRecvSGE)
	dst.max_inline_data = C.uint32_t(c.MaxInlineData)
}

//export gx_create_qp
func gx_create_qp(q *C.struct_ibv_qp, attr *C.struct_ibv_qp_init_attr) (rc C.int) {
	defer catch("create_qp", &rc)
	switch attr.qp_type {
	case C.IBV_QPT_RC, C.IBV_QPT_UC, C.IBV_QPT_UD:
	default:
		return C.int(syscall.EOPNOTSUPP) // XRC, raw packet and driver QPs, as on rxe
	}
	objects.mu.RLock()
	pd, scq, rcq := objects.pds[q.pd], objects.cqs[attr.send_cq], objects.cqs[attr.recv_cq]
	var srq *srqState
	if attr.srq != nil {
		srq = objects.srqs[attr.srq]
	}
	objects.mu.RUnlock()
	if pd == nil || scq == nil || rcq == nil || (attr.srq != nil && srq == nil) {
		return C.int(syscall.EINVAL)
	}
	in := gorxe.QPInitAttr{SendCQ: scq.cq, RecvCQ: rcq.cq, Cap: capsOf(attr.cap), QPType: gorxe.QPType(attr.qp_type),
		SQSigAll: attr.sq_sig_all != 0}
	if srq != nil {
		in.SRQ = srq.srq
	}
	qp, err := pd.Device().CreateQP(pd, &in)
	if err != nil {
		return errnoOf(err)
	}
	_, got, err := qp.Query()
	if err != nil {
		qp.Destroy()
		return errnoOf(err)
	}
	port, err := pd.Device().QueryPort(1)
	if err != nil {
		qp.Destroy()
		return errnoOf(err)
	}
	gq := (*C.struct_gx_qp_ex)(unsafe.Pointer(q))
	gq.max_ud = C.uint32_t(port.MaxMTU.Bytes())
	feed := &qpFeed{q: gq}
	qp.SetFeeder(feed)
	objects.mu.Lock()
	defer objects.mu.Unlock()
	objects.qps[q] = &qpState{ctx: q.context, qp: qp, feed: feed}
	objects.qpC[qp] = q
	C.gx_note_live_qps(C.int(len(objects.qps)))
	q.qp_num = C.uint32_t(qp.QPN())
	q.handle = objects.nextHandle()
	setCaps(&attr.cap, got.Cap)
	return 0
}

// ahAttrOf converts a C address vector. The flow label keeps its low 20 bits, the GRH's field:
// the kernel passes a larger value on, and its drivers, as rdma-core's conversion to a RoCEv2 UDP
// source port, use those bits only. UCX counts on it, setting all 32 bits for its first path.
func ahAttrOf(a *C.struct_ibv_ah_attr) gorxe.AHAttr {
	return gorxe.AHAttr{
		GRH: gorxe.GlobalRoute{
			DGID:      *(*[16]byte)(unsafe.Pointer(&a.grh.dgid)),
			FlowLabel: uint32(a.grh.flow_label) & gorxe.FlowLabelMask, SGIDIndex: uint8(a.grh.sgid_index),
			HopLimit: uint8(a.grh.hop_limit), TrafficClass: uint8(a.grh.traffic_class),
		},
		DLID: uint16(a.dlid), SL: uint8(a.sl), SrcPathBits: uint8(a.src_path_bits), StaticRate: uint8(a.static_rate),
		IsGlobal: a.is_global != 0, PortNum: uint8(a.port_num),
	}
}

func setAHAttr(dst *C.struct_ibv_ah_attr, a gorxe.AHAttr) {
	*(*[16]byte)(unsafe.Pointer(&dst.grh.dgid)) = a.GRH.DGID
	dst.grh.flow_label, dst.grh.sgid_index = C.uint32_t(a.GRH.FlowLabel), C.uint8_t(a.GRH.SGIDIndex)
	dst.grh.hop_limit, dst.grh.traffic_class = C.uint8_t(a.GRH.HopLimit), C.uint8_t(a.GRH.TrafficClass)
	dst.dlid, dst.sl, dst.src_path_bits = C.uint16_t(a.DLID), C.uint8_t(a.SL), C.uint8_t(a.SrcPathBits)
	dst.static_rate, dst.port_num = C.uint8_t(a.StaticRate), C.uint8_t(a.PortNum)
	dst.is_global = 0
	if a.IsGlobal {
		dst.is_global = 1
	}
}

//export gx_modify_qp
func gx_modify_qp(q *C.struct_ibv_qp, a *C.struct_ibv_qp_attr, mask C.int) (rc C.int) {
	defer catch("modify_qp", &rc)
	s := lookup(&objects, objects.qps, q)
	if s == nil || a == nil {
		return C.int(syscall.EINVAL)
	}
	if gorxe.QPAttrMask(mask)&gorxe.QPAttrAltPath != 0 {
		return C.int(syscall.EINVAL) // RoCE has no alternate path; rxe refuses it too
	}
	attr := gorxe.QPAttr{
		State: gorxe.QPState(a.qp_state), CurState: gorxe.QPState(a.cur_qp_state),
		PathMigState: gorxe.MigState(a.path_mig_state), PathMTU: gorxe.MTU(a.path_mtu), QKey: uint32(a.qkey),
		RQPSN: uint32(a.rq_psn), SQPSN: uint32(a.sq_psn), DestQPNum: uint32(a.dest_qp_num),
		AccessFlags: gorxe.Access(a.qp_access_flags), Cap: capsOf(a.cap), AHAttr: ahAttrOf(&a.ah_attr),
		PKeyIndex: uint16(a.pkey_index), EnSQDAsyncNotify: a.en_sqd_async_notify != 0,
		MaxRdAtomic: uint8(a.max_rd_atomic), MaxDestRdAtomic: uint8(a.max_dest_rd_atomic),
		MinRNRTimer: uint8(a.min_rnr_timer), PortNum: uint8(a.port_num), Timeout: uint8(a.timeout),
		RetryCnt: uint8(a.retry_cnt), RNRRetry: uint8(a.rnr_retry),
	}
	if err := s.qp.Modify(&attr, gorxe.QPAttrMask(mask)); err != nil {
		return errnoOf(err)
	}
	if gorxe.QPAttrMask(mask)&gorxe.QPAttrState != 0 && attr.State == gorxe.QPStateReset {
		s.feed.discard() // RESET discards posted work, and post.c counts the queues afresh
	}
	return 0
}

//export gx_query_qp
func gx_query_qp(q *C.struct_ibv_qp, out *C.struct_ibv_qp_attr, initAttr *C.struct_ibv_qp_init_attr) (rc C.int) {
	defer catch("query_qp", &rc)
	s := lookup(&objects, objects.qps, q)
	if s == nil || out == nil || initAttr == nil {
		return C.int(syscall.EINVAL)
	}
	a, in, err := s.qp.Query()
	if err != nil {
		return errnoOf(err)
	}
	*out = C.struct_ibv_qp_attr{}
	out.qp_state, out.cur_qp_state = C.enum_ibv_qp_state(a.State), C.enum_ibv_qp_state(a.State)
	out.path_mtu, out.path_mig_state = C.enum_ibv_mtu(a.PathMTU), C.enum_ibv_mig_state(a.PathMigState)
	out.qkey, out.rq_psn, out.sq_psn = C.uint32_t(a.QKey), C.uint32_t(a.RQPSN), C.uint32_t(a.SQPSN)
	out.dest_qp_num, out.qp_access_flags = C.uint32_t(a.DestQPNum), C.uint(a.AccessFlags)
	setCaps(&out.cap, in.Cap)
	setAHAttr(&out.ah_attr, a.AHAttr)
	out.pkey_index = C.uint16_t(a.PKeyIndex)
	if a.EnSQDAsyncNotify {
		out.en_sqd_async_notify = 1
	}
	if a.SQDraining {
		out.sq_draining = 1
	}
	out.max_rd_atomic, out.max_dest_rd_atomic = C.uint8_t(a.MaxRdAtomic), C.uint8_t(a.MaxDestRdAtomic)
	out.min_rnr_timer, out.port_num, out.timeout = C.uint8_t(a.MinRNRTimer), C.uint8_t(a.PortNum), C.uint8_t(a.Timeout)
	out.retry_cnt, out.rnr_retry = C.uint8_t(a.RetryCnt), C.uint8_t(a.RNRRetry)
	*initAttr = C.struct_ibv_qp_init_attr{}
	setCaps(&initAttr.cap, in.Cap)
	if in.SQSigAll {
		initAttr.sq_sig_all = 1
	}
	return 0
}

//export gx_destroy_qp
func gx_destroy_qp(q *C.struct_ibv_qp) (rc C.int) {
	defer catch("destroy_qp", &rc)
	return release(&objects, objects.qps, q, func(s *qpState) error { return s.qp.Destroy() }, func(s *qpState) {
		delete(objects.qpC, s.qp)
		C.gx_note_live_qps(C.int(len(objects.qps)))
	})
}

// sgesOf converts a C scatter/gather list into p.sges, returning the new elements.
func (p *posts) sgesOf(list *C.struct_ibv_sge, n C.int) []gorxe.SGE {
	if n <= 0 || list == nil {
		return nil
	}
	start := len(p.sges)
	for _, s := range unsafe.Slice(list, int(n)) {
		p.sges = append(p.sges, gorxe.SGE{Addr: uint64(s.addr), Length: uint32(s.length), LKey: uint32(s.lkey)})
	}
	return p.sges[start:len(p.sges):len(p.sges)]
}

// errPost reports a rejected work request: its index goes to bad, for the C side's bad_wr.
func errPost(err error, bad *C.int, fallback int) C.int {
	*bad = C.int(fallback)
	var pe *gorxe.PostError
	if errors.As(err, &pe) {
		*bad = C.int(pe.Index)
	}
	return errnoOf(err)
}

//export gx_post_send
func gx_post_send(q *C.struct_ibv_qp, flat *C.struct_gx_send_wr, n C.int, bad *C.int) (rc C.int) {
	defer catch("post_send", &rc)
	s := lookup(&objects, objects.qps, q)
	if s == nil {
		*bad = 0
		return C.int(errBadObject)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	wrs := unsafe.Slice(flat, int(n))
	s.send, s.sges = s.send[:0], s.sges[:0]
	for i := range wrs {
		wr, ok := s.sendWR(&wrs[i])
		if !ok {
			*bad = C.int(i)
			return C.int(syscall.EINVAL)
		}
		s.send = append(s.send, wr)
	}
	if err := s.qp.PostSend(s.send); err != nil {
		return errPost(err, bad, 0)
	}
	return 0
}

// sendWR converts a send work request C flattened; ok is false for a negative SGE count or an
// address handle the library does not know.
func (p *posts) sendWR(f *C.struct_gx_send_wr) (wr gorxe.SendWR, ok bool) {
	wr = gorxe.SendWR{ID: uint64(f.wr_id), Opcode: gorxe.WROpcode(f.opcode), Flags: gorxe.SendFlags(f.send_flags),
		ImmData: uint32(f.imm), InvalidateRKey: uint32(f.invalidate_rkey)}
	if f.num_sge < 0 {
		return wr, false
	}
	if wr.Flags&gorxe.SendInline != 0 {
		// gathered by the C side; gorxe copies it when it is posted
		if f.inline_len > 0 {
			wr.InlineData = unsafe.Slice((*byte)(f.inline_data), int(f.inline_len))
		}
	} else {
		wr.SGList = p.sgesOf(f.sg_list, f.num_sge)
	}
	switch wr.Opcode {
	case gorxe.WRBindMW:
		wr.BindMW = gorxe.MWBind{MWKey: uint32(f.mw_rkey), NewKey: uint32(f.rkey), MRKey: uint32(f.mr_lkey),
			Addr: uint64(f.remote_addr), Length: uint64(f.mw_length), Access: gorxe.Access(f.mw_access)}
	case gorxe.WRAtomicCmpAndSwp, gorxe.WRAtomicFetchAndAdd:
		wr.Atomic = gorxe.AtomicInfo{RemoteAddr: uint64(f.remote_addr), CompareAdd: uint64(f.compare_add),
			Swap: uint64(f.swap), RKey: uint32(f.rkey)}
	default:
		wr.RDMA = gorxe.RDMAInfo{RemoteAddr: uint64(f.remote_addr), RKey: uint32(f.rkey)}
	}
	if f.ah != nil {
		ah := lookup(&objects, objects.ahs, f.ah)
		if ah == nil {
			return wr, false
		}
		wr.UD = gorxe.UDInfo{AH: ah, RemoteQPN: uint32(f.remote_qpn), RemoteQKey: uint32(f.remote_qkey)}
	}
	return wr, true
}

// recvWRs converts n C receive work requests from first on into p.recv.
func (p *posts) recvWRs(first *C.struct_ibv_recv_wr, n C.int) ([]gorxe.RecvWR, int) {
	p.recv, p.sges = p.recv[:0], p.sges[:0]
	for w, i := first, 0; w != nil && i < int(n); w, i = w.next, i+1 {
		if w.num_sge < 0 {
			return nil, i
		}
		p.recv = append(p.recv, gorxe.RecvWR{ID: uint64(w.wr_id), SGList: p.sgesOf(w.sg_list, w.num_sge)})
	}
	return p.recv, -1
}

//export gx_post_recv
func gx_post_recv(obj unsafe.Pointer, isSRQ C.int, first *C.struct_ibv_recv_wr, n C.int, bad *C.int) (rc C.int) {
	defer catch("post_recv", &rc)
	*bad = 0
	if isSRQ != 0 {
		s := lookup(&objects, objects.srqs, (*C.struct_ibv_srq)(obj))
		if s == nil {
			return C.int(errBadObject)
		}
		return postRecvs(&s.mu, &s.posts, s.srq.PostRecv, first, n, bad)
	}
	s := lookup(&objects, objects.qps, (*C.struct_ibv_qp)(obj))
	if s == nil {
		return C.int(errBadObject)
	}
	return postRecvs(&s.mu, &s.posts, s.qp.PostRecv, first, n, bad)
}

// postRecvs converts n receive work requests from first on into p's scratch, which mu guards,
// and posts them; a bad one's index goes to bad.
func postRecvs(mu *sync.Mutex, p *posts, post func([]gorxe.RecvWR) error, first *C.struct_ibv_recv_wr, n C.int, bad *C.int) C.int {
	mu.Lock()
	defer mu.Unlock()
	wrs, badAt := p.recvWRs(first, n)
	if badAt >= 0 {
		*bad = C.int(badAt)
		return C.int(syscall.EINVAL)
	}
	if err := post(wrs); err != nil {
		return errPost(err, bad, 0)
	}
	return 0
}

func srqAttrOf(a *C.struct_ibv_srq_attr) gorxe.SRQAttr {
	return gorxe.SRQAttr{MaxWR: int(a.max_wr), MaxSGE: int(a.max_sge), SRQLimit: int(a.srq_limit)}
}

func setSRQAttr(dst *C.struct_ibv_srq_attr, a gorxe.SRQAttr) {
	dst.max_wr, dst.max_sge, dst.srq_limit = C.uint32_t(a.MaxWR), C.uint32_t(a.MaxSGE), C.uint32_t(a.SRQLimit)
}

//export gx_create_srq
func gx_create_srq(srq *C.struct_ibv_srq, attr *C.struct_ibv_srq_attr) (rc C.int) {
	defer catch("create_srq", &rc)
	pd := lookup(&objects, objects.pds, srq.pd)
	if pd == nil {
		return C.int(syscall.EINVAL)
	}
	s, err := pd.Device().CreateSRQ(pd, &gorxe.SRQInitAttr{Attr: srqAttrOf(attr)})
	if err != nil {
		return errnoOf(err)
	}
	s.SetFeeder(&srqFeed{g: (*C.struct_gx_srq)(unsafe.Pointer(srq))})
	if got, err := s.Query(); err == nil {
		setSRQAttr(attr, got)
	}
	objects.mu.Lock()
	defer objects.mu.Unlock()
	objects.srqs[srq] = &srqState{ctx: srq.context, srq: s}
	objects.srqC[s] = srq
	srq.handle = objects.nextHandle()
	return 0
}

//export gx_modify_srq
func gx_modify_srq(srq *C.struct_ibv_srq, attr *C.struct_ibv_srq_attr, mask C.int) (rc C.int) {
	defer catch("modify_srq", &rc)
	s := lookup(&objects, objects.srqs, srq)
	if s == nil || attr == nil {
		return C.int(syscall.EINVAL)
	}
	a := srqAttrOf(attr)
	return errnoOf(s.srq.Modify(&a, gorxe.SRQAttrMask(mask)))
}

//export gx_query_srq
func gx_query_srq(srq *C.struct_ibv_srq, attr *C.struct_ibv_srq_attr) (rc C.int) {
	defer catch("query_srq", &rc)
	s := lookup(&objects, objects.srqs, srq)
	if s == nil || attr == nil {
		return C.int(syscall.EINVAL)
	}
	a, err := s.srq.Query()
	if err != nil {
		return errnoOf(err)
	}
	setSRQAttr(attr, a)
	return 0
}

//export gx_destroy_srq
func gx_destroy_srq(srq *C.struct_ibv_srq) (rc C.int) {
	defer catch("destroy_srq", &rc)
	return release(&objects, objects.srqs, srq, func(s *srqState) error { return s.srq.Destroy() }, func(s *srqState) { delete(objects.srqC, s.srq) })
}

//export gx_create_ah
func gx_create_ah(ah *C.struct_ibv_ah, attr *C.struct_ibv_ah_attr) (rc C.int) {
	defer catch("create_ah", &rc)
	pd := lookup(&objects, objects.pds, ah.pd)
	if pd == nil {
		return C.int(syscall.EINVAL)
	}
	a := ahAttrOf(attr)
	h, err := pd.CreateAH(&a)
	if err != nil {
		return errnoOf(err)
	}
	objects.mu.Lock()
	defer objects.mu.Unlock()
	objects.ahs[ah] = h
	ah.handle = objects.nextHandle()
	return 0
}

//export gx_destroy_ah
func gx_destroy_ah(ah *C.struct_ibv_ah) (rc C.int) {
	defer catch("destroy_ah", &rc)
	return release(&objects, objects.ahs, ah, (*gorxe.AH).Destroy, nil)
}

//export gx_mcast
func gx_mcast(q *C.struct_ibv_qp, gid *C.uint8_t, attach C.int) (rc C.int) {
	defer catch("attach_mcast", &rc)
	s := lookup(&objects, objects.qps, q)
	if s == nil || gid == nil {
		return C.int(syscall.EINVAL)
	}
	g := gorxe.GID(unsafe.Slice((*byte)(unsafe.Pointer(gid)), 16))
	if attach != 0 {
		return errnoOf(s.qp.AttachMcast(g, 0))
	}
	return errnoOf(s.qp.DetachMcast(g, 0))
}
