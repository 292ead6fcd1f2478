package qp

import (
	"sync"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
)

// Progress is the transport's scratch space in each send WQE. The qp package zeroes it when the WQE
// is posted and never reads it; keeping it in the slot spares the engine a parallel array that
// would have to follow the ring's positions.
type Progress struct {
	State    uint8     // the transport's own WQE state
	FirstPSN uint32    // first PSN the message used
	LastPSN  uint32    // last PSN the message used (a READ spans its response PSNs)
	Sent     uint64    // payload bytes handed to the network so far
	Acked    uint64    // payload bytes acknowledged so far
	Cursor   mr.Cursor // gather or scatter position in the WQE's SGE list
}

// SendWQE is a posted send work request as the engine sees it. WR is the caller's request with
// SGList and InlineData pointing into the slot's own storage.
type SendWQE struct {
	WR SendWR
	// AH is the address handle behind WR.UD.AH on a datagram QP, resolved when the WR was
	// posted; nil on connected QPs.
	AH       *AH
	Length   uint64 // message length: the SGE total, or len(InlineData) with SendInline
	Index    uint64 // ring position, passed back to Complete
	Progress Progress

	sges   []mr.SGE // max_send_sge preallocated
	inline []byte   // max_inline_data preallocated
}

// signaled reports whether a successful completion produces a WC (SendSignaled or sq_sig_all).
func (w *SendWQE) signaled(sigAll bool) bool { return sigAll || w.WR.Flags&SendSignaled != 0 }

// SendQueue is a QP's send ring (see the package comment for its positions).
type SendQueue struct {
	mu     sync.Mutex
	q      *QP
	slots  slots[SendWQE]
	head   uint64
	cursor uint64
	tail   uint64
	// issued is the position up to which slots were handed to completions (as their tokens) or
	// freed outright; freed counts the slots given back to posters, which happens when those
	// completions are polled. freed <= issued <= head.
	issued   uint64
	freed    cq.Freed
	state    State // the QP's state, mirrored under mu for posting and starting
	draining bool  // SQD entered and started WQEs remain
	notify   bool  // raise EventSQDrained when draining ends
	closed   bool  // the QP was destroyed
}

// init sizes the ring; its slots, with their SGE arrays and inline buffers, are allocated a
// chunk at a time as posts reach them.
func (sq *SendQueue) init(q *QP, caps Caps) {
	sge, inl := caps.MaxSendSGE, caps.MaxInlineData
	sq.q = q
	sq.slots = newSlots(caps.MaxSendWR, func(c *[chunkSlots]SendWQE) {
		sges := make([]mr.SGE, chunkSlots*sge)
		inline := make([]byte, chunkSlots*inl)
		for i := range c {
			c[i].sges = sges[i*sge : (i+1)*sge : (i+1)*sge]
			c[i].inline = inline[i*inl : (i+1)*inl : (i+1)*inl]
		}
	})
}

func (s *SendQueue) slot(pos uint64) *SendWQE { return s.slots.at(pos) }

// Positions returns head, cursor and tail.
func (s *SendQueue) Positions() (head, cursor, tail uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.head, s.cursor, s.tail
}

// Peek returns head and cursor and, if pos is outstanding (head <= pos < tail), the WQE there:
// Positions and At under one lock, for the requester's walk, which needs both per step.
func (s *SendQueue) Peek(pos uint64) (head, cursor uint64, w *SendWQE) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pos >= s.head && pos < s.tail {
		w = s.slot(pos)
	}
	return s.head, s.cursor, w
}

// StartNext hands the requester the WQE at the cursor and advances the cursor. It returns false
// when nothing is waiting or the QP state does not allow starting new WQEs (anything but RTS:
// in SQD started WQEs finish but no new one starts).
func (s *SendQueue) StartNext() (*SendWQE, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateRTS || s.cursor == s.tail {
		return nil, false
	}
	w := s.slot(s.cursor)
	s.cursor++
	return w, true
}

// Head returns the oldest outstanding WQE, started or not.
func (s *SendQueue) Head() (*SendWQE, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.head == s.tail {
		return nil, false
	}
	return s.slot(s.head), true
}

// At returns the outstanding WQE at position pos, for walking [head, cursor) on retransmission.
func (s *SendQueue) At(pos uint64) (*SendWQE, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pos < s.head || pos >= s.tail {
		return nil, false
	}
	return s.slot(pos), true
}

// Complete retires the head WQE, which must be at position pos, with the given status: a WC goes
// to the send CQ if the WQE is signaled or the status is an error. The cursor moves along if the
// WQE had not been started. When it ends a drain in SQD, EventSQDrained is raised (if the QP asked
// for it with EnSQDAsyncNotify). Errors: ErrStale if pos is not the head (the queue was flushed or
// reset meanwhile: drop the result), or the CQ's error if the completion did not fit; the WQE is
// retired either way, and on overflow the transport should move the QP to ERR (IBTA class G).
func (s *SendQueue) Complete(pos uint64, status cq.Status, vendorErr uint32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.completeLocked(pos, status, vendorErr)
}

// Fail completes the head WQE, at position pos, with the error status st and takes the QP out of
// RTS in the same step: to SQE for UC, UD and GSI, to ERR for RC or when the completion overflows
// the CQ. The WQEs behind it are flushed after its WC. Whoever polls that WC and then queries the
// QP finds it out of RTS, which two steps (Complete, then EnterSQError) would not promise. It
// returns the state the QP left, whether it moved, and Complete's errors.
func (s *SendQueue) Fail(pos uint64, st cq.Status) (from State, moved bool, err error) {
	q := s.q
	q.mu.Lock() // held until the state has changed: QP.State and Query wait on it
	defer q.mu.Unlock()
	s.mu.Lock()
	err = s.completeLocked(pos, st, 0)
	s.mu.Unlock()
	if err == ErrStale {
		return q.attr.State, false, err
	}
	from, moved = q.enterErrorLocked(err == nil)
	return from, moved, err
}

func (s *SendQueue) completeLocked(pos uint64, status cq.Status, vendorErr uint32) error {
	if pos != s.head || s.head == s.tail {
		return ErrStale
	}
	w := s.slot(pos)
	var err error
	if status != cq.WCSuccess || w.signaled(s.q.sigAll) {
		wc := cq.WC{
			WRID: w.WR.ID, Status: status, Opcode: w.WR.Opcode.CompletionOpcode(),
			VendorErr: vendorErr, ByteLen: uint32(w.Length), QPNum: s.q.qpn,
		}
		err = s.pushLocked(&wc, pos)
	}
	s.retireLocked()
	return err
}

// full reports whether every slot holds a WQE that is outstanding or whose completion (or that
// of a later WQE) has not been polled yet (see cq.Freed).
func (s *SendQueue) full() bool { return s.tail-s.freed.Load() >= uint64(s.slots.len()) }

// pushLocked delivers the completion of the WQE at pos. Polling it frees the WQE's slot and those
// of the unsignaled WQEs before it, which complete without a completion of their own, as on
// hardware: their slots stay taken until a later signaled WQE's completion is polled. A
// completion the CQ refuses is lost, so its slots are freed at once.
func (s *SendQueue) pushLocked(wc *cq.WC, pos uint64) error {
	n := pos + 1 - s.issued
	s.issued = pos + 1
	err := s.q.sendCQ.Push(wc, false, s.freed.Token(n))
	if err != nil {
		s.freed.Add(n)
	}
	return err
}

// freeLocked frees at once the slots before end that no completion will give back: unsignaled
// WQEs of a queue that is flushed or reset.
func (s *SendQueue) freeLocked(end uint64) {
	if end > s.issued {
		s.freed.Add(end - s.issued)
		s.issued = end
	}
}

// retireLocked drops the head WQE and ends an SQD drain when nothing started is left.
func (s *SendQueue) retireLocked() {
	s.slot(s.head).WR.RegMR.Pages = nil // do not pin the caller's page list longer than needed
	s.head++
	if s.cursor < s.head {
		s.cursor = s.head
	}
	s.checkDrainedLocked()
}

func (s *SendQueue) checkDrainedLocked() {
	if s.draining && s.head == s.cursor {
		s.draining = false
		s.q.version.Add(1) // Query's SQDraining changed
		if s.notify {
			s.q.raise(EventSQDrained)
		}
	}
}

// flushLocked completes every outstanding WQE with WCWRFlushErr, oldest first.
func (s *SendQueue) flushLocked() {
	for s.head != s.tail {
		w := s.slot(s.head)
		wc := cq.WC{WRID: w.WR.ID, Status: cq.WCWRFlushErr, Opcode: w.WR.Opcode.CompletionOpcode(), QPNum: s.q.qpn}
		_ = s.pushLocked(&wc, s.head) // an overflowing CQ already raised its own error
		s.retireLocked()
	}
	s.freeLocked(s.head)
	s.draining = false
}

// discardLocked drops every WQE without completions (the move to RESET) and frees their slots.
// Completions already in the CQ keep theirs until they are polled.
func (s *SendQueue) discardLocked() {
	for s.head != s.tail {
		s.slot(s.head).WR.RegMR.Pages = nil
		s.head++
	}
	s.cursor = s.head
	s.freeLocked(s.head)
	s.draining = false
}
