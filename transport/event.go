package transport

import (
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// EventKind says what an Event reports.
type EventKind uint8

// The events an engine reports. Which fields of Event each one fills is said beside it; QPN is
// always set.
const (
	// EventQPError: the engine moved the QP from From to To (ERR, or SQE for UC and UD) because a
	// work request failed with Status, or, with Overrun set, because a completion (of status
	// Status) did not fit in its CQ.
	EventQPError EventKind = iota + 1
	// EventCompletionError: a work completion with an error Status other than WR_FLUSH_ERR was
	// produced for the work request WRID (Opcode; Recv says it was a receive). Flushes follow every
	// EventQPError and are not reported one by one.
	EventCompletionError
	// EventRetryTimeout: the retransmit timer expired and the requester sends again from PSN, the
	// oldest unacknowledged packet, with RetriesLeft retries (of retry_cnt) left after this one.
	// The timeout that finds none left is reported as the completion error RETRY_EXC_ERR.
	EventRetryTimeout
	// EventRNRTimeout: the RNR NAK timer expired and the requester sends again from PSN, with
	// RetriesLeft RNR retries (of rnr_retry; 7 is unlimited) left after this one. The RNR NAK that
	// finds none left is reported as the completion error RNR_RETRY_EXC_ERR.
	EventRNRTimeout
	// EventNAKSent: the responder answered PSN with the NAK or RNR NAK Syndrome.
	EventNAKSent
	// EventNAKReceived: the completer received the NAK or RNR NAK Syndrome for PSN.
	EventNAKReceived

	// NumEventKinds is one more than the largest EventKind, the length of a table indexed by kind.
	NumEventKinds
)

// String returns the kind's name.
func (k EventKind) String() string {
	switch k {
	case EventQPError:
		return "qp-error"
	case EventCompletionError:
		return "completion-error"
	case EventRetryTimeout:
		return "retry-timeout"
	case EventRNRTimeout:
		return "rnr-timeout"
	case EventNAKSent:
		return "nak-sent"
	case EventNAKReceived:
		return "nak-received"
	}
	return "unknown"
}

// EventMask is a set of EventKinds.
type EventMask uint16

// AllEvents holds every kind of event.
const AllEvents = EventMask(1<<NumEventKinds - 2)

// Mask returns the set holding k alone.
func (k EventKind) Mask() EventMask { return 1 << k }

// Has reports whether m holds k.
func (m EventMask) Has(k EventKind) bool { return m&k.Mask() != 0 }

// Event is something an engine did that a device may want to log: a QP error, a completion in
// error, a timeout, a NAK. It holds no pointers, so recording one costs no allocation. Which
// fields are set depends on Kind.
type Event struct {
	Kind EventKind
	QPN  uint32

	From, To qp.State // EventQPError
	Status   cq.Status
	Overrun  bool
	Opcode   cq.Opcode // EventCompletionError
	Recv     bool
	WRID     uint64

	PSN         packet.PSN // timeouts and NAKs
	RetriesLeft uint8      // timeouts
	Syndrome    packet.Syndrome
}

// note records ev in the output of the call under way if the caller asked for its kind.
func (e *Engine) note(ev Event) {
	if e.out == nil || !e.out.Want.Has(ev.Kind) {
		return
	}
	ev.QPN = e.q.QPN()
	e.out.Events = append(e.out.Events, ev)
}

// enteredError reports a QP error the engine caused through qp.EnterError or qp.EnterSQError,
// given what that returned.
func (e *Engine) enteredError(from qp.State, moved bool, st cq.Status, overrun bool) {
	if moved {
		e.note(Event{Kind: EventQPError, From: from, To: e.q.State(), Status: st, Overrun: overrun})
	}
}

// completedInError reports a completion in error; flushes are not reported.
func (e *Engine) completedInError(st cq.Status, op cq.Opcode, wrID uint64, recv bool) {
	if st != cq.WCSuccess && st != cq.WCWRFlushErr {
		e.note(Event{Kind: EventCompletionError, Status: st, Opcode: op, WRID: wrID, Recv: recv})
	}
}
