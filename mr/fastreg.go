package mr

// FastReg is what a REG_MR work request installs into a fast-register region (IB_WR_REG_MR with
// the page list ib_map_mr_sg would have built).
type FastReg struct {
	// Key is the new lkey/rkey: the region's index with a variant the consumer chose, usually
	// IncKey(old key). The index must not change.
	Key uint32
	// Access is the new access rights (same rules as RegMR).
	Access Access
	// IOVA is the address remote peers use for the first byte.
	IOVA uint64
	// Length is the region length in bytes.
	Length uint64
	// PageSize is the size of every page in Pages: a power of two, at least 4 KiB.
	PageSize int
	// Offset is where the region starts within Pages[0].
	Offset uint64
	// Pages is the page list, possibly non-contiguous, each exactly PageSize bytes. The list is
	// copied, so the caller may reuse it; the memory it points to is referenced until the region is
	// invalidated or deregistered.
	Pages [][]byte
}

// AllocMR allocates a fast-register region (ibv_alloc_mr / IB_MR_TYPE_MEM_REG) able to hold up to
// maxPages pages (at most MaxFastRegPageListLen). It starts in the free state: accesses fail with
// ErrMRInvalidState until a REG_MR work request (RegFast) makes it valid.
func (t *Table) AllocMR(pd *PD, maxPages int) (*MR, error) {
	if err := t.checkPD(pd); err != nil {
		return nil, opErr("alloc_mr", 0, err)
	}
	if maxPages < 1 || maxPages > MaxFastRegPageListLen {
		return nil, opErr("alloc_mr", 0, ErrPageList)
	}
	if err := pd.Acquire(); err != nil {
		return nil, opErr("alloc_mr", 0, err)
	}
	index, variant, err := t.newMRIndex()
	if err != nil {
		pd.Release()
		return nil, opErr("alloc_mr", 0, err)
	}
	m := &MR{t: t, index: index, fastReg: true, maxPages: maxPages, key: MakeKey(index, variant),
		pd: pd, pins: make([]*Buffer, 0, maxPages)}
	m.pt.pages = make([][]byte, 0, maxPages)
	m.g.init(stateFree)
	t.mu.Lock()
	t.mrs.publish(index, m)
	t.mu.Unlock()
	return m, nil
}

// MaxPages is the page-list capacity a fast-register region was allocated with (0 for user regions).
func (m *MR) MaxPages() int { return m.maxPages }

// RegFast executes a REG_MR work request posted on a QP whose PD is pd. Ordering rules: the
// region must be free (freshly allocated, or invalidated by LOCAL_INV or SEND_WITH_INV), otherwise
// ErrMRNotFree; after success it is valid under r.Key until the next invalidation. Allocation-free;
// returns bare sentinels (the engine reports a local QP operation error).
func (t *Table) RegFast(pd *PD, r *FastReg) error {
	if !IsMR(r.Key) {
		return ErrKeyInvalid
	}
	m := t.mrs.get(KeyIndex(r.Key))
	if m == nil {
		return ErrKeyInvalid
	}
	if err := validRegAccess(r.Access); err != nil {
		return err
	}
	shift, err := pageShift(r.PageSize)
	if err != nil {
		return err
	}
	if r.IOVA+r.Length-1 < r.IOVA {
		return ErrOutOfRange
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.g.load() == stateDead:
		return ErrKeyInvalid
	case !m.fastReg:
		return ErrWrongMRType
	case m.g.load() != stateFree:
		return ErrMRNotFree
	case m.pd != pd:
		return ErrPDMismatch
	}
	// The region is free, so no lookup can succeed on it; closing still waits out readers that
	// are looking at its key right now.
	m.g.close()
	if err := m.pt.fill(r.Pages, shift, r.Offset, r.Length); err != nil {
		m.g.open(stateFree)
		return err
	}
	for _, p := range m.pt.pages {
		m.pins = append(m.pins, pinBuffer(p))
	}
	m.key, m.access, m.iova = r.Key, r.Access, r.IOVA
	m.g.open(stateValid)
	t.recordMR(r.Key)
	return nil
}

// invalidate moves a fast-register region to the free state (LOCAL_INV, SEND_WITH_INV).
func (m *MR) invalidate(pd *PD, key uint32) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch s := m.g.load(); {
	case s == stateDead || m.key != key:
		return ErrKeyInvalid
	case !m.fastReg:
		return ErrWrongMRType
	case m.pd != pd:
		return ErrPDMismatch
	case m.mws.Load() > 0:
		return ErrMWBound
	case s == stateFree:
		return nil
	}
	m.g.close()
	m.pt.clear()
	unpinAll(m.pins)
	m.pins = m.pins[:0]
	m.g.open(stateFree)
	return nil
}
