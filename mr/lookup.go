package mr

// inRange reports whether [va, va+length) lies within [base, base+size), without overflow.
func inRange(va, length, base, size uint64) bool {
	return va >= base && length <= size && va-base <= size-length
}

// LookupRemote resolves an rkey for a request arriving on QP qpn whose PD is pd, checking that
// [va, va+length) may be accessed with the rights in need, and returns a Span over it. The rkey
// may name a region or a window; a window is resolved to its region with the window's range,
// rights and (type 2) QP association.
//
// need says what the request does: AccessRemoteRead (RDMA READ), AccessRemoteWrite (RDMA WRITE,
// ATOMIC_WRITE), AccessRemoteAtomic, AccessFlushGlobal/AccessFlushPersistent. For RDMA READ and
// WRITE (need has no other bits) a zero length skips the rkey check entirely, as IBTA C9-88
// requires, and returns an empty Span.
//
// Errors are bare sentinels: ErrKeyInvalid, ErrPDMismatch, ErrAccessDenied, ErrOutOfRange,
// ErrMWNotBound, ErrMWOtherQP, ErrMRInvalidState. Allocation-free. Release the Span when done.
func (t *Table) LookupRemote(rkey uint32, pd *PD, qpn uint32, need Access, va, length uint64) (Span, error) {
	if length == 0 && need != 0 && need&^(AccessRemoteRead|AccessRemoteWrite) == 0 {
		return Span{}, nil
	}
	return t.resolve(rkey, pd, qpn, need, va, length, true)
}

// LookupLocal resolves an lkey of a local SGE (regions only; windows have no lkey) for a QP with
// protection domain pd. need is AccessLocalWrite when the memory will be written, 0 to read.
// Allocation-free; release the Span when done.
func (t *Table) LookupLocal(lkey uint32, pd *PD, need Access, addr, length uint64) (Span, error) {
	if !IsMR(lkey) {
		return Span{}, ErrKeyInvalid
	}
	return t.resolveMR(t.mrs.get(KeyIndex(lkey)), lkey, pd, need, addr, length, true)
}

func (t *Table) resolve(rkey uint32, pd *PD, qpn uint32, need Access, va, length uint64, checkRange bool) (Span, error) {
	switch {
	case IsMR(rkey):
		return t.resolveMR(t.mrs.get(KeyIndex(rkey)), rkey, pd, need, va, length, checkRange)
	case IsMW(rkey):
		return t.resolveMW(t.mws.get(KeyIndex(rkey)), rkey, pd, qpn, need, va, length, checkRange)
	}
	return Span{}, ErrKeyInvalid
}

func (t *Table) resolveMR(m *MR, key uint32, pd *PD, need Access, va, length uint64, checkRange bool) (Span, error) {
	if m == nil {
		return Span{}, ErrKeyInvalid
	}
	s := m.g.enter()
	if s != stateValid && s != stateFree {
		return Span{}, ErrKeyInvalid
	}
	var err error
	switch {
	case m.key != key:
		err = ErrKeyInvalid
	case s == stateFree:
		err = ErrMRInvalidState
	case m.pd != pd:
		err = ErrPDMismatch
	case m.access&need != need:
		err = ErrAccessDenied
	case checkRange && !inRange(va, length, m.iova, m.pt.length):
		err = ErrOutOfRange
	}
	if err != nil {
		m.g.leave()
		return Span{}, err
	}
	if !checkRange {
		return Span{m: m, n: m.pt.length}, nil
	}
	return Span{m: m, off: va - m.iova, n: length}, nil
}

func (t *Table) resolveMW(w *MW, key uint32, pd *PD, qpn uint32, need Access, va, length uint64, checkRange bool) (Span, error) {
	if w == nil {
		return Span{}, ErrKeyInvalid
	}
	s := w.g.enter()
	if s != stateValid && s != stateFree {
		return Span{}, ErrKeyInvalid
	}
	defer w.g.leave()
	switch {
	case w.key != key:
		return Span{}, ErrKeyInvalid
	case w.pd != pd:
		return Span{}, ErrPDMismatch
	case s == stateFree || w.mr == nil:
		return Span{}, ErrMWNotBound
	case w.typ == MWType2 && w.qpn != qpn:
		return Span{}, ErrMWOtherQP
	case w.access&need != need:
		return Span{}, ErrAccessDenied
	}
	// Window-relative offset of the first byte: the va itself for a zero-based window.
	base := w.addr
	if w.access&AccessZeroBased != 0 {
		base = 0
	}
	if !checkRange {
		va, length = base, w.length
	}
	if !inRange(va, length, base, w.length) {
		return Span{}, ErrOutOfRange
	}
	off := va - base
	// The region cannot be deregistered, re-registered or invalidated while the window is bound
	// to it, and the window cannot change while we hold it, so the region is valid here; its own
	// hold keeps the memory for the Span's lifetime.
	m := w.mr
	if ms := m.g.enter(); ms != stateValid {
		if ms == stateFree {
			m.g.leave()
		}
		return Span{}, ErrKeyInvalid
	}
	return Span{m: m, off: w.addr - m.iova + off, n: length}, nil
}
