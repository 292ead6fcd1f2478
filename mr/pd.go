package mr

import "sync"

// PD is a protection domain (ibv_pd): regions, windows and QPs of one PD can only be used together.
// The data path compares PD pointers; a QP keeps the *PD it was created with.
type PD struct {
	t      *Table
	handle uint32

	mu    sync.Mutex
	users int
	dead  bool
}

// AllocPD creates a protection domain (ibv_alloc_pd).
func (t *Table) AllocPD() (*PD, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pds >= MaxPD {
		return nil, opErr("alloc_pd", 0, ErrTableFull)
	}
	t.pds++
	t.pdN++
	return &PD{t: t, handle: t.pdN}, nil
}

// Handle is a small number identifying the PD within its table (ibv_pd.handle).
func (pd *PD) Handle() uint32 { return pd.handle }

// Acquire records one more object using the PD (a QP, SRQ, AH, ...), so DeallocPD fails with
// ErrPDInUse until the matching Release. It fails with ErrDestroyed after DeallocPD.
func (pd *PD) Acquire() error {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	if pd.dead {
		return ErrDestroyed
	}
	pd.users++
	return nil
}

// Release undoes one Acquire.
func (pd *PD) Release() {
	pd.mu.Lock()
	if pd.users > 0 {
		pd.users--
	}
	pd.mu.Unlock()
}

// DeallocPD destroys the PD (ibv_dealloc_pd); it fails while regions, windows or other users remain.
func (pd *PD) DeallocPD() error {
	pd.mu.Lock()
	defer pd.mu.Unlock()
	if pd.dead {
		return opErr("dealloc_pd", 0, ErrDestroyed)
	}
	if pd.users > 0 {
		return opErr("dealloc_pd", 0, ErrPDInUse)
	}
	pd.dead = true
	pd.t.mu.Lock()
	pd.t.pds--
	pd.t.mu.Unlock()
	return nil
}
