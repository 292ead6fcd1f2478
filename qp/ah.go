package qp

import (
	"sync/atomic"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
)

// AH is an address handle (ibv_ah): a validated destination for UD and GSI work requests.
type AH struct {
	av        AddressVector
	pd        *mr.PD
	route     packet.Envelope // av resolved by Config.Route when the AH was created
	destroyed atomic.Bool
}

// AddressHandle is what a UD or GSI work request is addressed with: an *AH, or the address
// handle of a layer above that wraps one, which the table finds with Config.ResolveAH. The
// transport reads the destination through Attr; posting checks the AH behind it.
type AddressHandle interface {
	// Attr returns the destination's address vector.
	Attr() AddressVector
}

// resolveAH returns the AH behind h, or nil for none (a nil h, a nil *AH, or a handle the layer
// above does not recognise).
func (t *Table) resolveAH(h AddressHandle) *AH {
	if ah, ok := h.(*AH); ok {
		return ah
	}
	if h == nil || t.cfg.ResolveAH == nil {
		return nil
	}
	return t.cfg.ResolveAH(h)
}

// CreateAH validates av for RoCE (a GRH is required), resolves it (Config.Route) and creates an
// address handle (ibv_create_ah). A source GID index that resolves to no local address of the
// destination's family fails with an *AttrError for ErrInvalidGIDIndex, as the kernel's
// ibv_create_ah fails (EINVAL) when it cannot resolve the source GID and the route: an AH that
// exists always has its route, so a datagram never meets an unroutable one.
func (t *Table) CreateAH(pd *mr.PD, av *AddressVector) (*AH, error) {
	if err := checkAV(av, "ah_attr", &t.cfg.Limits); err != nil {
		return nil, err
	}
	route, err := t.resolve(av, "ah_attr")
	if err != nil {
		return nil, err
	}
	ah := &AH{av: *av, pd: pd, route: route}
	if err := pd.Acquire(); err != nil {
		return nil, err
	}
	return ah, nil
}

// resolve resolves av, a valid address vector named name, through Config.Route: a source GID
// index that names no local address of the destination's family is an *AttrError for
// ErrInvalidGIDIndex. Without Config.Route it returns an empty route.
func (t *Table) resolve(av *AddressVector, name string) (packet.Envelope, error) {
	if t.cfg.Route == nil {
		return packet.Envelope{}, nil
	}
	route, ok := t.cfg.Route(av)
	if !ok {
		return route, tableErr(ErrInvalidGIDIndex, name+".grh.sgid_index", uint64(av.GRH.SGIDIndex),
			"a local address of the destination's family")
	}
	return route, nil
}

// Attr returns the address vector (ibv_query_ah).
func (ah *AH) Attr() AddressVector { return ah.av }

// Route returns the framing of the packets sent through the AH, resolved once when it was created
// (Config.Route), as rxe resolves an AH's addresses when it creates it.
func (ah *AH) Route() packet.Envelope { return ah.route }

// PD returns the AH's protection domain.
func (ah *AH) PD() *mr.PD { return ah.pd }

// Destroy releases the AH (ibv_destroy_ah). Work requests already posted with it keep their copy
// of the pointer, so they still send.
func (ah *AH) Destroy() error {
	if ah.destroyed.Swap(true) {
		return ErrDestroyed
	}
	ah.pd.Release()
	return nil
}
