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
