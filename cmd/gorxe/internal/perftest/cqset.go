package perftest

import (
	"errors"

	"github.com/gorxe/gorxe"
)

// cqSet holds the CQs that one direction's completions go to, each QP's on one of them. A CQ
// must hold what its QPs can complete before it is polled: past its depth it overruns, its QPs
// enter the error state and their peer's messages fail with them (RETRY_EXC_ERR there, after its
// retries). One CQ holds at most gorxe.MaxCQE completions (rxe's limit). perftest asks for one CQ
// of depth × QPs, which a device refuses beyond its limit (on rxe from 64 SEND QPs of 512
// receives); the tools spread the QPs over as many CQs as it takes instead, so that `-q 1024`
// runs at perftest's depths. The CQs share the direction's completion channel.
type cqSet struct {
	cqs   []*gorxe.CQ
	perCQ int // QPs per CQ: QP q completes into cqs[q/perCQ]
	next  int // the CQ the next Poll looks at first
}

// newCQSet creates the CQs of nq QPs that can each have depth completions outstanding.
func newCQSet(dev *gorxe.Device, nq, depth int, ch *gorxe.CompChannel) (*cqSet, error) {
	depth = max(depth, 1)
	s := &cqSet{perCQ: max(gorxe.MaxCQE/depth, 1)}
	for left := max(nq, 1); left > 0; left -= s.perCQ {
		c, err := dev.CreateCQ(min(min(left, s.perCQ)*depth, gorxe.MaxCQE), ch)
		if err != nil {
			return nil, errors.Join(err, s.destroy())
		}
		s.cqs = append(s.cqs, c)
	}
	return s, nil
}

// of returns the CQ of QP q.
func (s *cqSet) of(q int) *gorxe.CQ { return s.cqs[q/s.perCQ] }

// Poll returns the completions of the first CQ that has any, looking at each in turn from the one
// after the CQ the last look ended at, so that every CQ's QPs are served.
func (s *cqSet) Poll(wcs []gorxe.WC) int {
	for range s.cqs {
		c := s.cqs[s.next]
		s.next = (s.next + 1) % len(s.cqs)
		if n := c.Poll(wcs); n > 0 {
			return n
		}
	}
	return 0
}

// ReqNotify arms every CQ of the set for its next completion.
func (s *cqSet) ReqNotify(solicitedOnly bool) error {
	for _, c := range s.cqs {
		if err := c.ReqNotify(solicitedOnly); err != nil {
			return err
		}
	}
	return nil
}

// destroy destroys the set's CQs.
func (s *cqSet) destroy() error {
	var errs []error
	for _, c := range s.cqs {
		errs = append(errs, c.Destroy())
	}
	s.cqs = nil
	return errors.Join(errs...)
}
