package gorxe

import (
	"sync"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/qp"
)

// objects maps the internal packages' objects to the public ones, for what those packages report
// with their own objects: asynchronous events and completion channel events.
type objects struct {
	mu   sync.Mutex
	qps  map[*qp.QP]*QP
	srqs map[*qp.SRQ]*SRQ
	cqs  map[*cq.CQ]*CQ
}

func (o *objects) init() {
	o.qps = make(map[*qp.QP]*QP)
	o.srqs = make(map[*qp.SRQ]*SRQ)
	o.cqs = make(map[*cq.CQ]*CQ)
}

func (o *objects) qp(q *qp.QP) *QP          { return get(o, o.qps, q) }
func (o *objects) srq(s *qp.SRQ) *SRQ       { return get(o, o.srqs, s) }
func (o *objects) cq(c *cq.CQ) *CQ          { return get(o, o.cqs, c) }
func (o *objects) setQP(q *qp.QP, w *QP)    { set(o, o.qps, q, w) }
func (o *objects) setSRQ(s *qp.SRQ, w *SRQ) { set(o, o.srqs, s, w) }
func (o *objects) setCQ(c *cq.CQ, w *CQ)    { set(o, o.cqs, c, w) }

func get[K comparable, V any](o *objects, m map[K]*V, k K) *V {
	o.mu.Lock()
	defer o.mu.Unlock()
	return m[k]
}

// set records w as the public object of k, or forgets k when w is nil.
func set[K comparable, V any](o *objects, m map[K]*V, k K, w *V) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w == nil {
		delete(m, k)
	} else {
		m[k] = w
	}
}
