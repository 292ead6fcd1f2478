package qp

import (
	"sync/atomic"

	"github.com/gorxe/gorxe/mr"
)

// AH is an address handle (ibv_ah): a validated destination for UD and GSI work requests.
type AH struct {
	av        AddressVector
	pd        *mr.PD
	destroyed atomic.Bool
}

// AddressHandle is what a UD or GSI work request is addressed with: an *AH, or a type of a layer
// above that wraps one, so that users of that layer need not unwrap it.
type AddressHandle interface {
	// Handle returns the address handle, or nil for a nil wrapper.
	Handle() *AH
}

// Handle returns ah itself: *AH is its own AddressHandle.
func (ah *AH) Handle() *AH { return ah }

// CreateAH validates av for RoCE (a GRH is required) and creates an address handle (ibv_create_ah).
func (t *Table) CreateAH(pd *mr.PD, av *AddressVector) (*AH, error) {
	if err := checkAV(av, "ah_attr", &t.cfg.Limits); err != nil {
		return nil, err
	}
	if err := pd.Acquire(); err != nil {
		return nil, err
	}
	return &AH{av: *av, pd: pd}, nil
}

// Attr returns the address vector (ibv_query_ah).
func (ah *AH) Attr() AddressVector { return ah.av }

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
