package gorxe

import "github.com/gorxe/gorxe/mr"

// PD is a protection domain (ibv_pd): memory regions, memory windows, QPs, SRQs and address
// handles created on the same PD can be used together, and only together.
type PD struct {
	dev *Device
	pd  *mr.PD
}

// AllocPD creates a protection domain (ibv_alloc_pd).
func (d *Device) AllocPD() (*PD, error) {
	if err := d.check("alloc_pd"); err != nil {
		return nil, err
	}
	pd, err := d.keys.AllocPD()
	if err != nil {
		return nil, opErr("alloc_pd", err)
	}
	return &PD{dev: d, pd: pd}, nil
}

// Device returns the device the PD belongs to.
func (pd *PD) Device() *Device { return pd.dev }

// Handle is a small number identifying the PD within its device (ibv_pd.handle).
func (pd *PD) Handle() uint32 { return pd.pd.Handle() }

// Dealloc destroys the PD (ibv_dealloc_pd). It fails with ErrPDInUse while regions, windows, QPs,
// SRQs or address handles still use it.
func (pd *PD) Dealloc() error {
	if err := pd.dev.check("dealloc_pd"); err != nil {
		return err
	}
	return opErr("dealloc_pd", pd.pd.DeallocPD())
}

// checkPD validates a PD argument of verb op on device d.
func (d *Device) checkPD(op string, pd *PD) error {
	switch {
	case pd == nil:
		return argErr(op, ErrNilObject, "protection domain is nil")
	case pd.dev != d:
		return argErr(op, ErrWrongDevice, "protection domain")
	}
	return d.check(op)
}
