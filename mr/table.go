package mr

import (
	"sync"
	"sync/atomic"
)

// Table is a device's key table: it hands out MR and MW indices and resolves keys on the data
// path. One Table per device; every method is safe for concurrent use.
type Table struct {
	mu  sync.Mutex // index allocation, variant history, PD count
	mrs slots[MR]
	mws slots[MW]
	pds int
	pdN uint32
}

// NewTable returns an empty key table using the index ranges MinMRIndex..MaxMRIndex and
// MinMWIndex..MaxMWIndex.
func NewTable() *Table {
	t := &Table{}
	t.mrs.init(MinMRIndex, MaxMRIndex)
	t.mws.init(MinMWIndex, MaxMWIndex)
	return t
}

const (
	chunkBits = 12
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1
)

// slots maps an index range to objects. The directory is fixed, chunks are allocated on first use,
// and readers load object pointers atomically without any lock.
type slots[T any] struct {
	first, last uint32
	next        uint32 // cyclic allocation cursor, so a freed index is not reused at once
	dir         []atomic.Pointer[chunk[T]]
}

type chunk[T any] struct {
	obj     [chunkSize]atomic.Pointer[T]
	taken   [chunkSize]bool  // reserved or published; guarded by Table.mu
	variant [chunkSize]uint8 // last variant used at the index; guarded by Table.mu
}

func (s *slots[T]) init(first, last uint32) {
	s.first, s.last, s.next = first, last, first
	s.dir = make([]atomic.Pointer[chunk[T]], (last-first)/chunkSize+1)
}

// get returns the object at index, or nil; lock-free.
func (s *slots[T]) get(index uint32) *T {
	if index < s.first || index > s.last {
		return nil
	}
	i := index - s.first
	c := s.dir[i>>chunkBits].Load()
	if c == nil {
		return nil
	}
	return c.obj[i&chunkMask].Load()
}

// at returns the chunk and slot of an index, allocating the chunk; Table.mu held.
func (s *slots[T]) at(index uint32) (*chunk[T], uint32) {
	i := index - s.first
	d := &s.dir[i>>chunkBits]
	c := d.Load()
	if c == nil {
		c = new(chunk[T])
		d.Store(c)
	}
	return c, i & chunkMask
}

// reserve finds a free index cyclically and gives it a fresh variant; Table.mu held.
func (s *slots[T]) reserve() (uint32, uint8, error) {
	n := s.last - s.first + 1
	for range n {
		idx := s.next
		if s.next == s.last {
			s.next = s.first
		} else {
			s.next++
		}
		c, j := s.at(idx)
		if c.taken[j] {
			continue
		}
		c.taken[j] = true
		v := nextVariant(c.variant[j])
		c.variant[j] = v
		return idx, v, nil
	}
	return 0, 0, ErrTableFull
}

// publish makes a reserved index resolvable.
func (s *slots[T]) publish(index uint32, obj *T) {
	c, j := s.at(index)
	c.obj[j].Store(obj)
}

// release frees an index; Table.mu held.
func (s *slots[T]) release(index uint32) {
	c, j := s.at(index)
	c.obj[j].Store(nil)
	c.taken[j] = false
}

// record notes a caller-chosen variant (fast registration, bind) so later random ones avoid it.
func (s *slots[T]) record(index uint32, v uint8) {
	c, j := s.at(index)
	c.variant[j] = v
}

// newMRIndex reserves an MR index.
func (t *Table) newMRIndex() (uint32, uint8, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mrs.reserve()
}

// newMWIndex reserves an MW index.
func (t *Table) newMWIndex() (uint32, uint8, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mws.reserve()
}

func (t *Table) recordMR(key uint32) {
	t.mu.Lock()
	t.mrs.record(KeyIndex(key), KeyVariant(key))
	t.mu.Unlock()
}

func (t *Table) recordMW(key uint32) {
	t.mu.Lock()
	t.mws.record(KeyIndex(key), KeyVariant(key))
	t.mu.Unlock()
}

func (t *Table) releaseMR(index uint32) {
	t.mu.Lock()
	t.mrs.release(index)
	t.mu.Unlock()
}

func (t *Table) releaseMW(index uint32) {
	t.mu.Lock()
	t.mws.release(index)
	t.mu.Unlock()
}

// checkPD validates a PD argument of a control call.
func (t *Table) checkPD(pd *PD) error {
	if pd == nil || pd.t != t {
		return ErrInvalidPD
	}
	return nil
}
