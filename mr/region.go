package mr

import (
	"sync"
	"sync/atomic"
)

// MR is a memory region (ibv_mr): a page table over registered memory, an IOVA base, a length,
// access rights and a key (lkey == rkey). User regions come from RegMR/RegMRIOVA; fast-register
// regions from AllocMR and the REG_MR work request (see RegFast).
type MR struct {
	t        *Table
	index    uint32
	fastReg  bool
	maxPages int

	mu  sync.Mutex // serialises control operations; lock order: MW.mu before MR.mu
	g   gate
	mws atomic.Int32 // windows bound to the region; incremented only under mu

	// Written under mu with the gate closed; read under mu or while holding the gate.
	key    uint32
	pd     *PD
	access Access
	iova   uint64
	pt     pageTable
	pins   []*Buffer // buffers pinned by the current translation, one per page (nil for Go memory)
}

// ReregFlags selects what ReregMR changes (enum ibv_rereg_mr_flags).
type ReregFlags uint32

// Rereg flags, with libibverbs values.
const (
	ReregChangeTranslation ReregFlags = 1 << 0 // IBV_REREG_MR_CHANGE_TRANSLATION
	ReregChangePD          ReregFlags = 1 << 1 // IBV_REREG_MR_CHANGE_PD
	ReregChangeAccess      ReregFlags = 1 << 2 // IBV_REREG_MR_CHANGE_ACCESS
)

const reregKnown = ReregChangeTranslation | ReregChangePD | ReregChangeAccess

// RegMR registers buf (ibv_reg_mr). The IOVA is the buffer's address, as with verbs, or 0 when
// access has AccessZeroBased. Memory from a huge-page Buffer uses the buffer's page size; other
// memory uses DefaultPageSize.
func (t *Table) RegMR(pd *PD, buf []byte, access Access) (*MR, error) {
	iova := uint64(addrOf(buf))
	if access&AccessZeroBased != 0 {
		iova = 0
	}
	m, err := t.regUser(pd, buf, iova, access)
	return m, opErr("reg_mr", 0, err)
}

// RegMRIOVA registers buf with a caller-chosen IOVA (ibv_reg_mr_iova): remote peers address the
// first byte of buf as iova. With AccessZeroBased the iova must be 0.
func (t *Table) RegMRIOVA(pd *PD, buf []byte, iova uint64, access Access) (*MR, error) {
	if access&AccessZeroBased != 0 && iova != 0 {
		return nil, opErr("reg_mr_iova", 0, ErrZeroBased)
	}
	m, err := t.regUser(pd, buf, iova, access)
	return m, opErr("reg_mr_iova", 0, err)
}

func (t *Table) regUser(pd *PD, buf []byte, iova uint64, access Access) (*MR, error) {
	if err := t.checkPD(pd); err != nil {
		return nil, err
	}
	if err := validRegAccess(access); err != nil {
		return nil, err
	}
	pt, pin, err := translate(buf)
	if err != nil {
		return nil, err
	}
	if iova+pt.length-1 < iova {
		pin.unpin()
		return nil, ErrOutOfRange
	}
	if err := pd.Acquire(); err != nil {
		pin.unpin()
		return nil, err
	}
	index, variant, err := t.newMRIndex()
	if err != nil {
		pin.unpin()
		pd.Release()
		return nil, err
	}
	m := &MR{t: t, index: index, key: MakeKey(index, variant), pd: pd, access: access, iova: iova,
		pt: pt, pins: []*Buffer{pin}}
	m.g.init(stateValid)
	t.mu.Lock()
	t.mrs.publish(index, m)
	t.mu.Unlock()
	return m, nil
}

// translate builds the page table of a user buffer and pins the Buffer it lives in, if any.
func translate(buf []byte) (pageTable, *Buffer, error) {
	if len(buf) == 0 {
		return pageTable{}, nil, ErrEmpty
	}
	pin := pinBuffer(buf)
	size := DefaultPageSize
	if pin != nil {
		size = pin.pageSize
	}
	shift, err := pageShift(size)
	if err != nil {
		pin.unpin()
		return pageTable{}, nil, err
	}
	return contiguous(buf, addrOf(buf), shift), pin, nil
}

// ReregMR changes a user region (ibv_rereg_mr): its PD, its access, and/or its translation (buf,
// with the IOVA rules of RegMR). Its keys stay; accesses through them see the new attributes. It
// fails with ErrMWBound while windows are bound and leaves the region unchanged on any error.
func (m *MR) ReregMR(flags ReregFlags, pd *PD, buf []byte, access Access) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := m.key
	err := m.rereg(flags, pd, buf, access)
	return opErr("rereg_mr", key, err)
}

func (m *MR) rereg(flags ReregFlags, pd *PD, buf []byte, access Access) error {
	if m.g.load() == stateDead {
		return ErrDestroyed
	}
	if m.fastReg {
		return ErrWrongMRType
	}
	if flags == 0 || flags&^reregKnown != 0 {
		return ErrReregFlags
	}
	if m.mws.Load() > 0 {
		return ErrMWBound
	}
	newPD, newAccess, newIOVA := m.pd, m.access, m.iova
	if flags&ReregChangeAccess != 0 {
		if err := validRegAccess(access); err != nil {
			return err
		}
		newAccess = access
	}
	if flags&ReregChangePD != 0 {
		if err := m.t.checkPD(pd); err != nil {
			return err
		}
		if err := pd.Acquire(); err != nil {
			return err
		}
		newPD = pd
	}
	undoPD := func() {
		if newPD != m.pd {
			newPD.Release()
		}
	}
	newPT, newPins := m.pt, m.pins
	if flags&ReregChangeTranslation != 0 {
		pt, pin, err := translate(buf)
		if err != nil {
			undoPD()
			return err
		}
		newPT, newPins = pt, []*Buffer{pin}
		newIOVA = uint64(addrOf(buf))
	}
	if newAccess&AccessZeroBased != 0 {
		newIOVA = 0
	} else if flags&ReregChangeAccess != 0 && m.access&AccessZeroBased != 0 && flags&ReregChangeTranslation == 0 {
		// Leaving zero-based addressing needs an address: that of the current first byte.
		newIOVA = uint64(addrOf(m.pt.pages[0]))
	}
	oldPD, oldPins := m.pd, m.pins
	// The keys stay: kernel rxe and mlx5 keep them, and programs (rdma-core's tests among them)
	// go on using the rkey their peer already has; an access through them sees the new
	// attributes once the guard reopens, and none through the old ones is still in progress.
	prev := m.g.close()
	m.pd, m.access, m.iova, m.pt, m.pins = newPD, newAccess, newIOVA, newPT, newPins
	m.g.open(prev)
	if oldPD != newPD {
		oldPD.Release()
	}
	if flags&ReregChangeTranslation != 0 {
		unpinAll(oldPins)
	}
	return nil
}

// DeregMR destroys the region (ibv_dereg_mr). It fails with an *Error wrapping ErrMWBound while
// memory windows are bound to it. When it returns, no access through the region is in progress and
// none can start.
func (m *MR) DeregMR() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.g.load() == stateDead {
		return opErr("dereg_mr", 0, ErrDestroyed)
	}
	if m.mws.Load() > 0 {
		return opErr("dereg_mr", m.key, ErrMWBound)
	}
	m.g.close()
	m.g.open(stateDead)
	m.t.releaseMR(m.index)
	unpinAll(m.pins)
	m.pins = nil
	m.pt.clear()
	m.pd.Release()
	return nil
}

func unpinAll(pins []*Buffer) {
	for i, b := range pins {
		b.unpin()
		pins[i] = nil
	}
}

// LKey returns the local key (ibv_mr.lkey).
func (m *MR) LKey() uint32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.key
}

// RKey returns the remote key (ibv_mr.rkey); it always equals LKey.
func (m *MR) RKey() uint32 { return m.LKey() }

// IOVA returns the address remote peers and SGEs use for the first byte (ibv_mr.addr for a plain
// registration).
func (m *MR) IOVA() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.iova
}

// Length returns the registered length in bytes.
func (m *MR) Length() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pt.length
}

// Access returns the region's access rights.
func (m *MR) Access() Access {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.access
}

// PD returns the region's protection domain.
func (m *MR) PD() *PD {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pd
}

// IsFastReg reports whether the region was allocated with AllocMR for fast registration.
func (m *MR) IsFastReg() bool { return m.fastReg }

// Valid reports whether the region can currently be accessed (false for a free fast-reg region or
// after DeregMR). It is a snapshot.
func (m *MR) Valid() bool { return m.g.load() == stateValid }
