package counter

import (
	"iter"
	"sync/atomic"
)

// Set is one array of atomic counters indexed by ID. Its zero value is ready. The engine of a QP
// increments its own Set, which no other goroutine writes, so the atomics stay uncontended.
type Set struct {
	v [NumIDs]atomic.Uint64
}

// Inc adds one to counter id.
func (s *Set) Inc(id ID) { s.v[id].Add(1) }

// Dec takes one from counter id: it takes back an Inc made ahead of an event that then did not
// happen, so that readers never see the event before the count.
func (s *Set) Dec(id ID) { s.v[id].Add(^uint64(0)) }

// Add adds n to counter id.
func (s *Set) Add(id ID, n uint64) { s.v[id].Add(n) }

// Load returns counter id.
func (s *Set) Load(id ID) uint64 { return s.v[id].Load() }

// Snapshot returns every counter of s. Counters are read one by one, so a snapshot taken while
// they change is not one instant, only close to one.
func (s *Set) Snapshot() Snapshot {
	var out Snapshot
	s.AddTo(&out)
	return out
}

// AddTo adds every counter of s to sum.
func (s *Set) AddTo(sum *Snapshot) {
	for i := range s.v {
		sum[i] += s.v[i].Load()
	}
}

// Fold adds every counter of s to the live set into, as a destroyed QP's counters join its
// device's retired totals.
func (s *Set) Fold(into *Set) {
	for i := range s.v {
		if n := s.v[i].Load(); n != 0 {
			into.v[i].Add(n)
		}
	}
}

// Snapshot is a copy of a Set's values: cheap to take, pass and compare.
type Snapshot [NumIDs]uint64

// Get returns counter id.
func (s Snapshot) Get(id ID) uint64 { return s[id] }

// All yields every counter's ID and value in ID order; ID.Name and ID.Desc give its name and
// help text.
func (s Snapshot) All() iter.Seq2[ID, uint64] {
	return func(yield func(ID, uint64) bool) {
		for id := range NumIDs {
			if !yield(id, s[id]) {
				return
			}
		}
	}
}
