package qp

// chunkSlots is how many ring slots are allocated together. A send WQE with one SGE and the
// default inline room takes about 460 bytes, so a chunk is a few KiB: a ring grows in steps
// that cost one allocation per chunk, and an idle queue holds none.
const chunkSlots = 16

// slots is the storage of a ring of n slots, allocated a chunk at a time when a slot is first
// written. An idle RC QP with perftest's depths (128 send, 512 receive WRs) held ~100 KiB of
// preallocated slots; this way a queue that was never posted to costs its chunk table only. A
// slot never moves once allocated, so the engine may keep a pointer to a started send WQE
// between calls. The caller serialises access (the queue's lock).
type slots[T any] struct {
	n      int
	chunks []*[chunkSlots]T
	// prepare readies a new chunk (points its slots at their SGE and inline storage); nil
	// leaves the slots zero.
	prepare func(c *[chunkSlots]T)
}

func newSlots[T any](n int, prepare func(c *[chunkSlots]T)) slots[T] {
	return slots[T]{n: n, prepare: prepare}
}

// len returns the ring's capacity in slots.
func (s *slots[T]) len() int { return s.n }

// at returns the slot of ring position pos, allocating its chunk on first use.
func (s *slots[T]) at(pos uint64) *T {
	i := int(pos % uint64(s.n))
	k := i / chunkSlots
	if k >= len(s.chunks) {
		s.chunks = append(s.chunks, make([]*[chunkSlots]T, k+1-len(s.chunks))...)
	}
	c := s.chunks[k]
	if c == nil {
		c = new([chunkSlots]T)
		if s.prepare != nil {
			s.prepare(c)
		}
		s.chunks[k] = c
	}
	return &c[i%chunkSlots]
}
