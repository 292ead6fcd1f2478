package gorxe

import (
	"sync/atomic"

	"github.com/gorxe/gorxe/mr"
)

// Access is a set of memory access rights, bit-compatible with libibverbs' enum
// ibv_access_flags.
type Access = mr.Access

// Access rights (IBV_ACCESS_*).
const (
	AccessLocalWrite      = mr.AccessLocalWrite      // IBV_ACCESS_LOCAL_WRITE
	AccessRemoteWrite     = mr.AccessRemoteWrite     // IBV_ACCESS_REMOTE_WRITE
	AccessRemoteRead      = mr.AccessRemoteRead      // IBV_ACCESS_REMOTE_READ
	AccessRemoteAtomic    = mr.AccessRemoteAtomic    // IBV_ACCESS_REMOTE_ATOMIC
	AccessMWBind          = mr.AccessMWBind          // IBV_ACCESS_MW_BIND
	AccessZeroBased       = mr.AccessZeroBased       // IBV_ACCESS_ZERO_BASED
	AccessOnDemand        = mr.AccessOnDemand        // IBV_ACCESS_ON_DEMAND
	AccessHugeTLB         = mr.AccessHugeTLB         // IBV_ACCESS_HUGETLB
	AccessFlushGlobal     = mr.AccessFlushGlobal     // IBV_ACCESS_FLUSH_GLOBAL
	AccessFlushPersistent = mr.AccessFlushPersistent // IBV_ACCESS_FLUSH_PERSISTENT
	AccessRelaxedOrdering = mr.AccessRelaxedOrdering // IBV_ACCESS_RELAXED_ORDERING
)

// ReregFlags selects what MR.Rereg changes (enum ibv_rereg_mr_flags).
type ReregFlags = mr.ReregFlags

// Rereg flags (IBV_REREG_MR_*).
const (
	ReregChangeTranslation = mr.ReregChangeTranslation // IBV_REREG_MR_CHANGE_TRANSLATION
	ReregChangePD          = mr.ReregChangePD          // IBV_REREG_MR_CHANGE_PD
	ReregChangeAccess      = mr.ReregChangeAccess      // IBV_REREG_MR_CHANGE_ACCESS
)

// SGE is a scatter/gather element of a work request (struct ibv_sge): Length bytes at Addr (an
// address of the region, see MR.Addr) in the region whose lkey is LKey.
type SGE = mr.SGE

// IncKey returns key with its 8-bit variant incremented and its index kept (ibv_inc_rkey): the
// usual new key of a fast registration or a window bind.
func IncKey(key uint32) uint32 { return mr.IncKey(key) }

// MR is a memory region (ibv_mr). The region keeps the registered memory alive; AllocBuffer gives
// memory outside the Go heap that huge pages and mlock can back.
type MR struct {
	dev *Device
	pd  atomic.Pointer[PD] // changed by Rereg with ReregChangePD
	mr  *mr.MR
}

func newMR(pd *PD, m *mr.MR) *MR {
	r := &MR{dev: pd.dev, mr: m}
	r.pd.Store(pd)
	return r
}

// RegMR registers buf for access by this PD's QPs (ibv_reg_mr). Peers address its first byte by
// the buffer's address, or by 0 with AccessZeroBased.
//
// The device's workers read and write buf while remote operations run, as a NIC's DMA would. The
// program must not touch bytes that a posted or remote operation may be using until its
// completion says it is done, and operations from different QPs must not write the same bytes at
// once: IBTA leaves their result undefined, and the race detector reports them as data races.
func (pd *PD) RegMR(buf []byte, access Access) (*MR, error) {
	if err := pd.dev.check("reg_mr"); err != nil {
		return nil, err
	}
	m, err := pd.dev.keys.RegMR(pd.pd, buf, access)
	if err != nil {
		return nil, opErr("reg_mr", err)
	}
	return newMR(pd, m), nil
}

// RegMRIOVA registers buf with a chosen I/O virtual address: peers address its first byte as
// iova (ibv_reg_mr_iova).
func (pd *PD) RegMRIOVA(buf []byte, iova uint64, access Access) (*MR, error) {
	if err := pd.dev.check("reg_mr"); err != nil {
		return nil, err
	}
	m, err := pd.dev.keys.RegMRIOVA(pd.pd, buf, iova, access)
	if err != nil {
		return nil, opErr("reg_mr", err)
	}
	return newMR(pd, m), nil
}

// AllocMR allocates a fast-register memory region able to map up to maxPages pages
// (ibv_alloc_mr-style, as the kernel's IB_MR_TYPE_MEM_REG). It is unusable until a REG_MR work
// request registers memory into it.
func (pd *PD) AllocMR(maxPages int) (*MR, error) {
	if err := pd.dev.check("alloc_mr"); err != nil {
		return nil, err
	}
	m, err := pd.dev.keys.AllocMR(pd.pd, maxPages)
	if err != nil {
		return nil, opErr("alloc_mr", err)
	}
	return newMR(pd, m), nil
}

// LKey returns the local key (ibv_mr.lkey), used in SGEs.
func (m *MR) LKey() uint32 { return m.mr.LKey() }

// RKey returns the remote key (ibv_mr.rkey) peers use in RDMA and atomic requests. It equals
// LKey.
func (m *MR) RKey() uint32 { return m.mr.RKey() }

// Addr returns the I/O virtual address of the region's first byte (ibv_mr.addr): the buffer's
// address, 0 for a zero-based region, or the IOVA given to RegMRIOVA.
func (m *MR) Addr() uint64 { return m.mr.IOVA() }

// Length returns the registered length in bytes (ibv_mr.length).
func (m *MR) Length() uint64 { return m.mr.Length() }

// Access returns the region's access rights.
func (m *MR) Access() Access { return m.mr.Access() }

// PD returns the region's protection domain.
func (m *MR) PD() *PD { return m.pd.Load() }

// Valid reports whether the region can be accessed now: false after Dereg and for a fast-register
// region that holds no registration.
func (m *MR) Valid() bool { return m.mr.Valid() }

// Rereg changes the region's protection domain, access rights and/or memory (ibv_rereg_mr);
// flags say which of pd, buf and access are used. The keys stay, as on kernel rxe and mlx5: a
// peer's rkey reaches the region with its new attributes. On error the region is unchanged.
func (m *MR) Rereg(flags ReregFlags, pd *PD, buf []byte, access Access) error {
	if err := m.dev.check("rereg_mr"); err != nil {
		return err
	}
	var inner *mr.PD
	if flags&ReregChangePD != 0 {
		if err := m.dev.checkPD("rereg_mr", pd); err != nil {
			return err
		}
		inner = pd.pd
	}
	if err := m.mr.ReregMR(flags, inner, buf, access); err != nil {
		return opErr("rereg_mr", err)
	}
	if inner != nil {
		m.pd.Store(pd)
	}
	m.dev.rt.Quiesce() // the old memory may be the program's again: no send may still read it
	return nil
}

// Dereg destroys the region (ibv_dereg_mr). It fails with ErrMWBound while memory windows are
// bound to it. When it returns no access through the region is in progress.
func (m *MR) Dereg() error {
	if err := m.dev.check("dereg_mr"); err != nil {
		return err
	}
	if err := m.mr.DeregMR(); err != nil {
		return opErr("dereg_mr", err)
	}
	// Payloads leave from registered memory (transport.Output.Views): wait for the sends that
	// were built from this region, so that the program may free its memory once this returns.
	m.dev.rt.Quiesce()
	return nil
}

// Buffer is page-aligned memory mapped outside the Go heap, the safest memory to register: the
// garbage collector never moves or frees it, and Free refuses while a region uses it.
type Buffer struct{ b *mr.Buffer }

// BufferOptions selects how AllocBuffer backs its memory: HugePages asks for huge pages (falling
// back to normal pages with a transparent-huge-page hint) and Lock mlocks the buffer, as pinned
// RDMA memory would be (a failure is reported).
type BufferOptions = mr.BufferOptions

// AllocBuffer maps size bytes of zeroed, page-aligned memory for registration.
func AllocBuffer(size int, opts BufferOptions) (*Buffer, error) {
	b, err := mr.AllocBuffer(size, opts)
	if err != nil {
		return nil, opErr("alloc_buffer", err)
	}
	return &Buffer{b: b}, nil
}

// Bytes returns the buffer's memory (exactly the requested size), or nil after Free.
func (b *Buffer) Bytes() []byte { return b.b.Bytes() }

// PageSize is the size of the pages backing the buffer; regions registered over it use it as
// their page size.
func (b *Buffer) PageSize() int { return b.b.PageSize() }

// HugePages reports whether huge pages back the buffer.
func (b *Buffer) HugePages() bool { return b.b.HugePages() }

// Locked reports whether the buffer is mlocked.
func (b *Buffer) Locked() bool { return b.b.Locked() }

// Free unmaps the buffer. It fails with ErrBufferInUse (which matches ErrInUse too) while a
// region is registered over it, and with ErrDestroyed when called twice. Slices obtained from
// Bytes must not be used afterwards.
func (b *Buffer) Free() error { return opErr("free_buffer", b.b.Free()) }
