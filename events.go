package gorxe

import (
	"context"
	"fmt"
	"sync"

	"github.com/gorxe/gorxe/qp"
)

// EventType is the kind of an asynchronous event (enum ibv_event_type); String gives
// ibv_event_type_str's text.
type EventType = qp.EventType

// Asynchronous event types (IBV_EVENT_*).
const (
	EventCQErr            = qp.EventCQErr            // a CQ overran
	EventQPFatal          = qp.EventQPFatal          // the QP went to the error state
	EventQPReqErr         = qp.EventQPReqErr         // the peer sent an invalid request
	EventQPAccessErr      = qp.EventQPAccessErr      // the peer violated an access right
	EventCommEst          = qp.EventCommEst          // first packet received in RTR
	EventSQDrained        = qp.EventSQDrained        // SQD reached with nothing in flight
	EventPathMig          = qp.EventPathMig          // never raised: RoCE has no APM
	EventPathMigErr       = qp.EventPathMigErr       // never raised
	EventDeviceFatal      = qp.EventDeviceFatal      // never raised
	EventPortActive       = qp.EventPortActive       // the port is up (raised by Open)
	EventPortErr          = qp.EventPortErr          // never raised: the port never goes down
	EventLIDChange        = qp.EventLIDChange        // never raised
	EventPKeyChange       = qp.EventPKeyChange       // never raised
	EventSMChange         = qp.EventSMChange         // never raised
	EventSRQErr           = qp.EventSRQErr           // an SRQ failed
	EventSRQLimitReached  = qp.EventSRQLimitReached  // an SRQ fell below its armed limit
	EventQPLastWQEReached = qp.EventQPLastWQEReached // a QP on an SRQ entered ERR
	EventClientReregister = qp.EventClientReregister // never raised
	EventGIDChange        = qp.EventGIDChange        // never raised
	EventWQFatal          = qp.EventWQFatal          // never raised
)

// AsyncEvent is one asynchronous event (struct ibv_async_event): the object it concerns is set,
// the others are nil.
type AsyncEvent struct {
	Type EventType
	QP   *QP  // QP events
	CQ   *CQ  // EventCQErr
	SRQ  *SRQ // SRQ events
	Port uint8
}

// maxQueuedEvents bounds the events waiting for GetAsyncEvent; beyond it the oldest are dropped,
// so a program that never reads events cannot make the device grow without bound.
const maxQueuedEvents = 4096

// eventQueue holds asynchronous events until GetAsyncEvent takes them.
type eventQueue struct {
	mu      sync.Mutex
	q       []AsyncEvent
	dropped uint64
	ready   chan struct{} // capacity 1: "q may be non-empty"
}

func (e *eventQueue) init() { e.ready = make(chan struct{}, 1) }

// push queues ev. It never blocks: it may be called from the CQ's overflow path with queue locks
// held.
func (e *eventQueue) push(ev AsyncEvent) {
	e.mu.Lock()
	if len(e.q) >= maxQueuedEvents {
		e.q = append(e.q[:0], e.q[1:]...)
		e.dropped++
	}
	e.q = append(e.q, ev)
	e.mu.Unlock()
	select {
	case e.ready <- struct{}{}:
	default:
	}
}

// String describes the event, e.g. "QP fatal error (QP 17)"; the zero AsyncEvent, which a failed
// GetAsyncEvent returns, is "no event".
func (ev AsyncEvent) String() string {
	switch {
	case ev.QP != nil:
		return fmt.Sprintf("%v (QP %d)", ev.Type, ev.QP.QPN())
	case ev.CQ != nil:
		return fmt.Sprintf("%v (CQ)", ev.Type)
	case ev.SRQ != nil:
		return fmt.Sprintf("%v (SRQ)", ev.Type)
	case ev.Port != 0:
		return fmt.Sprintf("%v (port %d)", ev.Type, ev.Port)
	}
	return "no event"
}

// GetAsyncEvent returns the oldest asynchronous event, waiting for one until ctx ends
// (ibv_get_async_event). A ctx that is already done returns its error even with events queued.
// After Close it returns the events still queued, then ErrDeviceClosed. On error the event is the
// zero AsyncEvent. There is nothing to acknowledge: the event holds its objects, so destroying
// them is never blocked by an unread event.
func (d *Device) GetAsyncEvent(ctx context.Context) (AsyncEvent, error) {
	e := &d.events
	if err := ctx.Err(); err != nil {
		return AsyncEvent{}, &Error{Op: "get_async_event", Err: err}
	}
	for {
		e.mu.Lock()
		if len(e.q) > 0 {
			ev := e.q[0]
			e.q[0] = AsyncEvent{}
			e.q = e.q[1:]
			more := len(e.q) > 0
			e.mu.Unlock()
			if more {
				select {
				case e.ready <- struct{}{}:
				default:
				}
			}
			return ev, nil
		}
		e.mu.Unlock()
		select {
		case <-e.ready:
		case <-d.done:
			e.mu.Lock()
			empty := len(e.q) == 0
			e.mu.Unlock()
			if empty {
				return AsyncEvent{}, &Error{Op: "get_async_event", Err: ErrDeviceClosed}
			}
		case <-ctx.Done():
			return AsyncEvent{}, &Error{Op: "get_async_event", Err: ctx.Err()}
		}
	}
}
