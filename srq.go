package gorxe

import "github.com/gorxe/gorxe/qp"

// SRQInitAttr are the creation parameters of a shared receive queue (struct ibv_srq_init_attr).
type SRQInitAttr struct {
	// Context is returned by SRQ.Context (srq_context).
	Context any
	// Attr sizes the queue; a non-zero SRQLimit arms the limit event at once.
	Attr SRQAttr
}

// SRQ is a shared receive queue (ibv_srq): receive work requests consumed by every QP created on
// it.
type SRQ struct {
	dev *Device
	pd  *PD
	s   *qp.SRQ
	ctx any
}

// CreateSRQ creates a shared receive queue (ibv_create_srq).
func (d *Device) CreateSRQ(pd *PD, attr *SRQInitAttr) (*SRQ, error) {
	const op = "create_srq"
	if err := d.checkPD(op, pd); err != nil {
		return nil, err
	}
	if attr == nil {
		return nil, argErr(op, ErrNilObject, "init attributes are nil")
	}
	w := &SRQ{dev: d, pd: pd, ctx: attr.Context}
	s, err := d.qpt.CreateSRQ(pd.pd, &qp.SRQInitAttr{Context: w, Attr: attr.Attr})
	if err != nil {
		return nil, opErr(op, err)
	}
	w.s = s
	return w, nil
}

// Context returns SRQInitAttr.Context.
func (s *SRQ) Context() any { return s.ctx }

// PD returns the SRQ's protection domain.
func (s *SRQ) PD() *PD { return s.pd }

// PostRecv posts receive work requests to the SRQ (ibv_post_srq_recv); a *PostError names the one
// it stopped at.
func (s *SRQ) PostRecv(wrs []RecvWR) error {
	if err := s.dev.check("post_srq_recv"); err != nil {
		return err
	}
	return opErr("post_srq_recv", s.s.PostRecv(wrs))
}

// Modify resizes the SRQ and/or arms its limit event (ibv_modify_srq).
func (s *SRQ) Modify(attr *SRQAttr, mask SRQAttrMask) error {
	const op = "modify_srq"
	if attr == nil {
		return argErr(op, ErrNilObject, "attributes are nil")
	}
	if err := s.dev.check(op); err != nil {
		return err
	}
	return opErr(op, s.s.Modify(attr, mask))
}

// Query returns the SRQ's attributes (ibv_query_srq).
func (s *SRQ) Query() (SRQAttr, error) {
	if err := s.dev.check("query_srq"); err != nil {
		return SRQAttr{}, err
	}
	return s.s.Query(), nil
}

// Len returns the number of receive work requests waiting in the SRQ.
func (s *SRQ) Len() int { return s.s.Len() }

// Destroy releases the SRQ (ibv_destroy_srq); it fails with ErrInUse while QPs use it.
func (s *SRQ) Destroy() error {
	if err := s.dev.check("destroy_srq"); err != nil {
		return err
	}
	return opErr("destroy_srq", s.s.Destroy())
}
