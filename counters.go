package gorxe

import (
	"iter"

	"github.com/gorxe/gorxe/counter"
)

// Counters is a snapshot of the statistics of a device (Device.Counters) or of one QP
// (QP.Counters). Counters carry the names of rxe's hardware counters (rdma statistic show) where
// rxe has them, so numbers compare directly with a kernel peer's; package counter lists them all
// with their help texts. A device's counters are its own (drops before a packet reaches a QP,
// send errors, the network's drops) plus those of its live QPs and of the QPs destroyed on it.
type Counters struct{ s counter.Snapshot }

// Get returns counter id, e.g. c.Get(counter.CompleterRetryErr) for completer_retry_err.
func (c Counters) Get(id counter.ID) uint64 { return c.s.Get(id) }

// All yields every counter's name and value, in the order of package counter's table.
func (c Counters) All() iter.Seq2[string, uint64] {
	return func(yield func(string, uint64) bool) {
		for id, v := range c.s.All() {
			if !yield(id.Name(), v) {
				return
			}
		}
	}
}

// Snapshot returns the values indexed by counter ID, for exporters that label them.
func (c Counters) Snapshot() counter.Snapshot { return c.s }

// Counters returns a snapshot of the device's statistics. It works after Close too.
func (d *Device) Counters() Counters { return Counters{d.rt.Counters()} }

// Counters returns a snapshot of the QP's statistics. It works after Destroy too (the counters
// then stay as they were).
func (q *QP) Counters() Counters { return Counters{q.h.Counters()} }

// QPCounters yields the QPN and a snapshot of the statistics of every live QP of the device, in
// QPN order, for live views and metric exporters. It costs the traffic nothing: the counters are
// read where the engines keep them. A QP destroyed while the sequence runs may still be yielded,
// with its final counters; after Close it yields the QPs that were never destroyed.
func (d *Device) QPCounters() iter.Seq2[uint32, Counters] {
	return func(yield func(uint32, Counters) bool) {
		for qpn, s := range d.rt.QPCounters() {
			if !yield(qpn, Counters{s}) {
				return
			}
		}
	}
}
