package gorxe

import "github.com/gorxe/gorxe/mr"

// MWType is a memory window type (enum ibv_mw_type).
type MWType = mr.MWType

// Memory window types.
const (
	// MWType1 windows are bound with QP.BindMW and unbound by binding a zero length.
	MWType1 = mr.MWType1 // IBV_MW_TYPE_1
	// MWType2 windows are bound by a BIND_MW work request, belong to that QP, and are invalidated
	// by LOCAL_INV or a peer's SEND_WITH_INV.
	MWType2 = mr.MWType2 // IBV_MW_TYPE_2
)

// MW is a memory window (ibv_mw): a range of a memory region that peers may access with the
// window's own rkey and rights.
type MW struct {
	pd *PD
	mw *mr.MW
}

// AllocMW allocates a memory window (ibv_alloc_mw).
func (pd *PD) AllocMW(typ MWType) (*MW, error) {
	if err := pd.dev.check("alloc_mw"); err != nil {
		return nil, err
	}
	w, err := pd.dev.keys.AllocMW(pd.pd, typ)
	if err != nil {
		return nil, opErr("alloc_mw", err)
	}
	return &MW{pd: pd, mw: w}, nil
}

// RKey returns the window's current rkey (ibv_mw.rkey); every bind changes it.
func (w *MW) RKey() uint32 { return w.mw.RKey() }

// Type returns the window type.
func (w *MW) Type() MWType { return w.mw.Type() }

// PD returns the window's protection domain.
func (w *MW) PD() *PD { return w.pd }

// Bound reports whether the window is bound to a region now.
func (w *MW) Bound() bool { return w.mw.Bound() }

// Dealloc destroys the window (ibv_dealloc_mw), unbinding it first.
func (w *MW) Dealloc() error {
	if err := w.pd.dev.check("dealloc_mw"); err != nil {
		return err
	}
	return opErr("dealloc_mw", w.mw.DeallocMW())
}
