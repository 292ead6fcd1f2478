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
// device's addresses, of the same IP family as the DGID, or CreateAH fails with
// ErrInvalidGIDIndex. The route is resolved here, once, and every datagram sent through the
// handle uses it.
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

// AddressHandle is the type of UDInfo.AH: give it an *AH. Its one method, Attr, is AH.Attr.
type AddressHandle = qp.AddressHandle

// resolveAH is the QP table's Config.ResolveAH: the qp package's handle behind an *AH a work
// request names, or nil for a nil *AH or another type.
func resolveAH(h qp.AddressHandle) *qp.AH {
	if a, _ := h.(*AH); a != nil {
		return a.ah
	}
	return nil
}

// Destroy releases the handle (ibv_destroy_ah). Work requests already posted with it still send.
func (a *AH) Destroy() error {
	if err := a.pd.dev.check("destroy_ah"); err != nil {
		return err
	}
	return opErr("destroy_ah", a.ah.Destroy())
}
