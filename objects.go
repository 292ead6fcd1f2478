package gorxe

import (
	"sync"

	"github.com/gorxe/gorxe/qp"
)

// objects maps the qp package's objects to the public ones, for asynchronous events, which the
// qp package raises with its own objects.
type objects struct {
	mu   sync.Mutex
	qps  map[*qp.QP]*QP
	srqs map[*qp.SRQ]*SRQ
}

func (o *objects) init() {
	o.qps = make(map[*qp.QP]*QP)
	o.srqs = make(map[*qp.SRQ]*SRQ)
}

func (o *objects) qp(q *qp.QP) *QP {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.qps[q]
}

func (o *objects) srq(s *qp.SRQ) *SRQ {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.srqs[s]
}

func (o *objects) setQP(q *qp.QP, w *QP) {
	o.mu.Lock()
	if w == nil {
		delete(o.qps, q)
	} else {
		o.qps[q] = w
	}
	o.mu.Unlock()
}

func (o *objects) setSRQ(s *qp.SRQ, w *SRQ) {
	o.mu.Lock()
	if w == nil {
		delete(o.srqs, s)
	} else {
		o.srqs[s] = w
	}
	o.mu.Unlock()
}
