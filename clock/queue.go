package clock

import "time"

// Queue holds values by deadline, earliest first, and values sharing a deadline in the order they
// were pushed: the order every timer-driven part of gorxe needs (a fake clock's timers, delayed
// datagrams, a worker's QP deadlines). It is a binary heap of values rather than container/heap,
// so pushing does not box the value and does not allocate once the queue has grown.
//
// There is no removal: owners that cancel or move a deadline leave the old entry behind and skip it
// when it surfaces (compare it with the owner's current deadline or generation).
//
// The zero Queue is empty and ready to use. A Queue is not safe for concurrent use.
type Queue[T any] struct {
	items []queued[T]
	seq   uint64
}

type queued[T any] struct {
	at  time.Time
	seq uint64
	v   T
}

// before orders entries by deadline, then by push order.
func (e *queued[T]) before(o *queued[T]) bool {
	if !e.at.Equal(o.at) {
		return e.at.Before(o.at)
	}
	return e.seq < o.seq
}

// Len returns the number of entries.
func (q *Queue[T]) Len() int { return len(q.items) }

// Push adds v with deadline at.
func (q *Queue[T]) Push(at time.Time, v T) {
	q.seq++
	q.items = append(q.items, queued[T]{at: at, seq: q.seq, v: v})
	a := q.items
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a[i].before(&a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

// Peek returns the earliest entry without removing it; ok is false when the queue is empty.
func (q *Queue[T]) Peek() (at time.Time, v T, ok bool) {
	if len(q.items) == 0 {
		return at, v, false
	}
	return q.items[0].at, q.items[0].v, true
}

// Pop removes and returns the earliest entry; ok is false when the queue is empty.
func (q *Queue[T]) Pop() (at time.Time, v T, ok bool) {
	a := q.items
	if len(a) == 0 {
		return at, v, false
	}
	at, v = a[0].at, a[0].v
	n := len(a) - 1
	a[0] = a[n]
	a[n] = queued[T]{} // drop the reference for the garbage collector
	a = a[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && a[l].before(&a[m]) {
			m = l
		}
		if r < n && a[r].before(&a[m]) {
			m = r
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	q.items = a
	return at, v, true
}

// Reset empties the queue, keeping its storage.
func (q *Queue[T]) Reset() {
	clear(q.items)
	q.items = q.items[:0]
}
