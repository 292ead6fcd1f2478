package qp

import (
	"fmt"
	"sync"
)

// GSIQPN is the QP number of the general services QP.
const GSIQPN = 1

// minQPN is the first ordinary QP number (rxe's RXE_MIN_QP_INDEX): 0 is the SMI QP, which RoCE
// lacks, 1 is GSI and the rest of the low numbers are left unused as rxe does.
const minQPN = 16

// Config is what a device hands its QP table: its limits and where asynchronous events go. The
// table calls nothing else above it: whoever posts work or changes a QP tells the transport.
type Config struct {
	Limits Limits
	Events EventSink // may be nil: events are dropped
	// ResolveAH returns the *AH behind an address handle of the layer above (which wraps an *AH
	// in a type of its own), or nil when it is none of its handles. May be nil: then only *AH
	// addresses a work request.
	ResolveAH func(AddressHandle) *AH
}

// Table is a device's set of QPs: it creates QPs, SRQs and AHs against the device's limits, hands
// out QP numbers and resolves them on the receive path.
type Table struct {
	cfg  Config
	mu   sync.RWMutex
	qps  map[uint32]*QP
	next uint32 // next ordinary QPN to try; allocation is cyclic like rxe's pool
	n    int    // ordinary QPs in qps
}

// NewTable creates an empty table.
func NewTable(cfg Config) *Table {
	return &Table{cfg: cfg, qps: make(map[uint32]*QP), next: minQPN}
}

// Limits returns the limits the table checks against.
func (t *Table) Limits() Limits { return t.cfg.Limits }

// Lookup returns the QP with number qpn, or nil. It takes a read lock only, for the receive path.
func (t *Table) Lookup(qpn uint32) *QP {
	t.mu.RLock()
	q := t.qps[qpn]
	t.mu.RUnlock()
	return q
}

// Len returns the number of QPs.
func (t *Table) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.qps)
}

// insert assigns q a QP number and adds it.
func (t *Table) insert(q *QP) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if q.typ == TypeGSI {
		if t.qps[GSIQPN] != nil {
			return ErrGSIExists
		}
		q.qpn = GSIQPN
		t.qps[GSIQPN] = q
		return nil
	}
	maxQPN := uint32(minQPN + t.cfg.Limits.MaxQP - 1)
	if t.n >= t.cfg.Limits.MaxQP {
		return fmt.Errorf("%w: %d QPs exist", ErrTableFull, t.n)
	}
	for t.qps[t.next] != nil {
		t.next++
		if t.next > maxQPN {
			t.next = minQPN
		}
	}
	q.qpn = t.next
	t.qps[q.qpn] = q
	t.n++
	t.next++
	if t.next > maxQPN {
		t.next = minQPN
	}
	return nil
}

func (t *Table) remove(q *QP) {
	t.mu.Lock()
	if t.qps[q.qpn] == q {
		delete(t.qps, q.qpn)
		if q.typ != TypeGSI {
			t.n--
		}
	}
	t.mu.Unlock()
}

func (t *Table) raise(e Event) {
	if t.cfg.Events != nil {
		t.cfg.Events.HandleEvent(e)
	}
}
