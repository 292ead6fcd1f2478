package gorxe

import "github.com/gorxe/gorxe/qp"

// AH is an address handle (ibv_ah): a validated destination for UD and GSI sends, named in
// SendWR.UD.AH. Create it with PD.CreateAH.
type AH struct {
	pd *PD
	ah *qp.AH
}

// CreateAH creates an address handle for UD and GSI sends (ibv_create_ah). RoCE needs a GRH:
// attr.IsGlobal set and attr.GRH.DGID the peer's GID; attr.GRH.SGIDIndex must name one of this
// device's addresses.
func (pd *PD) CreateAH(attr *AHAttr) (*AH, error) {
	const op = "create_ah"
	d := pd.dev
	if err := d.check(op); err != nil {
		return nil, err
	}
	if attr == nil {
		return nil, argErr(op, ErrNilObject, "address vector is nil")
	}
	if attr.IsGlobal && !d.gidIndexUsable(int(attr.GRH.SGIDIndex)) {
		return nil, argErr(op, ErrInvalidGIDIndex, d.unusableGID(int(attr.GRH.SGIDIndex)))
	}
	ah, err := d.qpt.CreateAH(pd.pd, attr)
	if err != nil {
		return nil, opErr(op, err)
	}
	return &AH{pd: pd, ah: ah}, nil
}

// Attr returns the address vector the handle was created with (ibv_query_ah).
func (a *AH) Attr() AHAttr { return a.ah.Attr() }

// PD returns the handle's protection domain.
func (a *AH) PD() *PD { return a.pd }

// Handle returns the qp package's address handle, or nil for a nil *AH; it makes *AH usable as
// SendWR.UD.AH.
func (a *AH) Handle() *qp.AH {
	if a == nil {
		return nil
	}
	return a.ah
}

// Destroy releases the handle (ibv_destroy_ah). Work requests already posted with it still send.
func (a *AH) Destroy() error {
	if err := a.pd.dev.check("destroy_ah"); err != nil {
		return err
	}
	return opErr("destroy_ah", a.ah.Destroy())
}
