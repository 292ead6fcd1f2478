package qp

import (
	"fmt"
	"sync"

	"github.com/gorxe/gorxe/packet"
)

// GSIQPN is the QP number of the general services QP.
const GSIQPN = 1

// minQPN is the first ordinary QP number (rxe's RXE_MIN_QP_INDEX): 0 is the SMI QP, which RoCE
// lacks, 1 is GSI and the rest of the low numbers are left unused as rxe does.
const minQPN = 16

// Config is what a device hands its QP table: its limits, where asynchronous events go and how
// address handles resolve. The table calls nothing else above it: whoever posts work or changes a
// QP tells the transport.
type Config struct {
	Limits Limits
	Events EventSink // may be nil: events are dropped
	// ResolveAH returns the *AH behind an address handle of the layer above (which wraps an *AH
	// in a type of its own), or nil when it is none of its handles. May be nil: then only *AH
	// addresses a work request.
	ResolveAH func(AddressHandle) *AH
	// Route resolves an address vector into the framing of the packets sent along it (the
	// transport's Env.Route): once per AH when CreateAH makes it, and to check a connected
	// QP's path when Modify sets it; ok false fails either. May be nil only in a table whose
	// QPs send nothing (AH routes are then empty, paths unchecked).
	Route func(*AddressVector) (packet.Envelope, bool)
}

// Table creates a device's QPs, SRQs and AHs against the device's limits and hands out QP
// numbers. It keeps which numbers are taken, not the QPs: the stack's index is the one that
// finds a QP by number, for the receive path.
type Table struct {
	cfg   Config
	mu    sync.Mutex
	taken map[uint32]struct{}
	next  uint32 // next ordinary QPN to try; allocation is cyclic like rxe's pool
	n     int    // ordinary QPNs taken
}

// NewTable creates an empty table.
func NewTable(cfg Config) *Table {
	return &Table{cfg: cfg, taken: make(map[uint32]struct{}), next: minQPN}
}

// Limits returns the limits the table checks against.
func (t *Table) Limits() Limits { return t.cfg.Limits }

// insert assigns q a free QP number.
func (t *Table) insert(q *QP) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if q.typ == TypeGSI {
		if _, ok := t.taken[GSIQPN]; ok {
			return ErrGSIExists
		}
		q.qpn = GSIQPN
		t.taken[GSIQPN] = struct{}{}
		return nil
	}
	maxQPN := uint32(minQPN + t.cfg.Limits.MaxQP - 1)
	if t.n >= t.cfg.Limits.MaxQP {
		return fmt.Errorf("%w: %d QPs exist", ErrTableFull, t.n)
	}
	for _, ok := t.taken[t.next]; ok; _, ok = t.taken[t.next] {
		t.next++
		if t.next > maxQPN {
			t.next = minQPN
		}
	}
	q.qpn = t.next
	t.taken[q.qpn] = struct{}{}
	t.n++
	t.next++
	if t.next > maxQPN {
		t.next = minQPN
	}
	return nil
}

// remove frees q's number; Destroy calls it once.
func (t *Table) remove(q *QP) {
	t.mu.Lock()
	delete(t.taken, q.qpn)
	if q.typ != TypeGSI {
		t.n--
	}
	t.mu.Unlock()
}

func (t *Table) raise(e Event) {
	if t.cfg.Events != nil {
		t.cfg.Events.HandleEvent(e)
	}
}
