package mr

import "sync"

// MWType is a memory window type (enum ibv_mw_type).
type MWType uint8

// Memory window types, with libibverbs values.
const (
	// MWType1 windows are bound with a verbs call, are not tied to a QP and cannot be invalidated
	// (bind them with length 0 instead).
	MWType1 MWType = 1 // IBV_MW_TYPE_1
	// MWType2 windows (type 2B) are bound by a BIND_MW work request, belong to the QP that bound
	// them, and are freed by LOCAL_INV or a remote SEND_WITH_INV.
	MWType2 MWType = 2 // IBV_MW_TYPE_2
)

// String returns "type1" or "type2".
func (t MWType) String() string {
	switch t {
	case MWType1:
		return "type1"
	case MWType2:
		return "type2"
	}
	return "MWType(invalid)"
}

// MW is a memory window (ibv_mw): a remotely accessible range of a region with its own rkey and
// access rights.
type MW struct {
	t     *Table
	index uint32
	typ   MWType
	pd    *PD

	mu sync.Mutex // serialises control operations; taken before the bound MR's mu
	g  gate

	// Written under mu with the gate closed; read under mu or while holding the gate.
	key    uint32
	mr     *MR    // nil when unbound
	addr   uint64 // IOVA of the window's first byte in the region
	length uint64
	access Access
	qpn    uint32 // type 2: the QP the window is associated with
}

// AllocMW allocates a memory window (ibv_alloc_mw). Type 1 windows start valid but unbound; type 2
// windows start free.
func (t *Table) AllocMW(pd *PD, typ MWType) (*MW, error) {
	if err := t.checkPD(pd); err != nil {
		return nil, opErr("alloc_mw", 0, err)
	}
	if typ != MWType1 && typ != MWType2 {
		return nil, opErr("alloc_mw", 0, ErrMWType)
	}
	if err := pd.Acquire(); err != nil {
		return nil, opErr("alloc_mw", 0, err)
	}
	index, variant, err := t.newMWIndex()
	if err != nil {
		pd.Release()
		return nil, opErr("alloc_mw", 0, err)
	}
	w := &MW{t: t, index: index, typ: typ, pd: pd, key: MakeKey(index, variant)}
	if typ == MWType1 {
		w.g.init(stateValid)
	} else {
		w.g.init(stateFree)
	}
	t.mu.Lock()
	t.mws.publish(index, w)
	t.mu.Unlock()
	return w, nil
}

// RKey returns the window's current rkey (ibv_mw.rkey).
func (w *MW) RKey() uint32 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.key
}

// Type returns the window type.
func (w *MW) Type() MWType { return w.typ }

// PD returns the window's protection domain.
func (w *MW) PD() *PD { return w.pd }

// Bound reports whether the window is currently bound to a region (a snapshot).
func (w *MW) Bound() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mr != nil
}

// DeallocMW destroys the window (ibv_dealloc_mw), unbinding it first.
func (w *MW) DeallocMW() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.g.load() == stateDead {
		return opErr("dealloc_mw", 0, ErrDestroyed)
	}
	w.g.close()
	w.unbindLocked()
	w.g.open(stateDead)
	w.t.releaseMW(w.index)
	w.pd.Release()
	return nil
}

// Bind describes a window bind: the BIND_MW work request, which ibv_bind_mw also turns into for
// type 1 windows.
type Bind struct {
	MWKey  uint32 // the window's current rkey
	NewKey uint32 // the rkey after the bind: same index, new variant (usually IncKey(MWKey))
	MRKey  uint32 // lkey of the region to bind to; ignored when Length is 0
	Addr   uint64 // IOVA in the region of the window's first byte
	Length uint64 // 0 unbinds a type 1 window; type 2 windows need a length
	Access Access // remote rights granted, optionally AccessZeroBased
}

// BindMW executes a bind on a QP (number qpn, protection domain pd). Rules: type 1 windows must be
// valid and not zero-based; type 2 windows must be free, bind a real range, and become associated
// with qpn. The QP, window and region must share a PD; the region needs AccessMWBind, must not be
// zero-based, must have AccessLocalWrite when the window grants remote write or atomic access, and
// must contain [Addr, Addr+Length). Allocation-free; returns bare sentinels (the engine reports a
// memory window bind error).
func (t *Table) BindMW(pd *PD, qpn uint32, b *Bind) error {
	if !IsMW(b.MWKey) {
		return ErrKeyInvalid
	}
	if KeyIndex(b.NewKey) != KeyIndex(b.MWKey) {
		return ErrKeyIndex
	}
	if b.Access&^accessMWBindable != 0 {
		return ErrAccessFlags
	}
	w := t.mws.get(KeyIndex(b.MWKey))
	if w == nil {
		return ErrKeyInvalid
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	state := w.g.load()
	switch {
	case state == stateDead || w.key != b.MWKey:
		return ErrKeyInvalid
	case w.pd != pd:
		return ErrPDMismatch
	}
	if w.typ == MWType1 {
		if b.Access&AccessZeroBased != 0 {
			return ErrZeroBased
		}
	} else {
		if state != stateFree {
			return ErrMWState
		}
		if b.Length == 0 {
			return ErrOutOfRange
		}
	}
	if b.Length == 0 {
		w.g.close()
		w.unbindLocked()
		w.key = b.NewKey
		w.g.open(stateValid)
		t.recordMW(b.NewKey)
		return nil
	}
	if !IsMR(b.MRKey) {
		return ErrKeyInvalid
	}
	m := t.mrs.get(KeyIndex(b.MRKey))
	if m == nil {
		return ErrKeyInvalid
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.checkBind(pd, b); err != nil {
		return err
	}
	w.g.close()
	w.unbindLocked()
	m.mws.Add(1)
	w.mr, w.addr, w.length, w.access, w.key = m, b.Addr, b.Length, b.Access, b.NewKey
	if w.typ == MWType2 {
		w.qpn = qpn
	}
	w.g.open(stateValid)
	t.recordMW(b.NewKey)
	return nil
}

// checkBind applies the region-side bind rules; m.mu held.
func (m *MR) checkBind(pd *PD, b *Bind) error {
	s := m.g.load()
	switch {
	case s == stateDead || m.key != b.MRKey:
		return ErrKeyInvalid
	case s == stateFree:
		return ErrMRInvalidState
	case m.pd != pd:
		return ErrPDMismatch
	case m.access&AccessZeroBased != 0:
		return ErrZeroBased
	case m.access&AccessMWBind == 0:
		return ErrAccessDenied
	case b.Access&(AccessRemoteWrite|AccessRemoteAtomic) != 0 && m.access&AccessLocalWrite == 0:
		return ErrAccessDenied
	case !inRange(b.Addr, b.Length, m.iova, m.pt.length):
		return ErrOutOfRange
	}
	return nil
}

// unbindLocked detaches the window from its region; w.mu held and gate closed. The region's
// window count is decremented without its lock: increments need the region's mutex (so a dereg
// cannot miss one), while a decrement of a window nobody can reach any more can only let a
// pending dereg succeed, and taking no second region lock keeps rebinds deadlock-free.
func (w *MW) unbindLocked() {
	if w.mr != nil {
		w.mr.mws.Add(-1)
	}
	w.mr, w.addr, w.length, w.access, w.qpn = nil, 0, 0, 0, 0
}

// invalidate frees a type 2 window (LOCAL_INV, or SEND_WITH_INV when remote). A remote
// invalidation must arrive on the QP the window is associated with.
func (w *MW) invalidate(pd *PD, qpn uint32, key uint32, remote bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch s := w.g.load(); {
	case s == stateDead || w.key != key:
		return ErrKeyInvalid
	case w.typ != MWType2:
		return ErrMWType
	case w.pd != pd:
		return ErrPDMismatch
	case s == stateFree:
		return nil
	case remote && w.qpn != qpn:
		return ErrMWOtherQP
	}
	w.g.close()
	w.unbindLocked()
	w.g.open(stateFree)
	return nil
}
