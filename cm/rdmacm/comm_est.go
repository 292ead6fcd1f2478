package rdmacm

import (
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
)

// commEstSlots bounds the Communication Established notices waiting for the run loop. A notice
// that finds them full is dropped: the REP's retransmission still brings the RTU back.
const commEstSlots = 64

// commEstHandler returns the event handler of the passive side's QP for connection id: its
// EventCommEst reaches the run loop, which tells the manager (ib_cm_notify). The application's
// GetAsyncEvent still gets the event. The handler runs on the transport's goroutine, so it only
// queues the notice, without blocking.
func (a *agent) commEstHandler(id cm.ConnID) func(gorxe.AsyncEvent) {
	return func(e gorxe.AsyncEvent) {
		if e.Type != gorxe.EventCommEst {
			return
		}
		select {
		case a.commEst <- id:
		default:
		}
	}
}

// onCommEst establishes a passive connection whose QP received a packet before the RTU, as if
// the RTU had come. A connection that is established already, or gone, is left alone.
func (a *agent) onCommEst(now time.Time, id cm.ConnID, out *cm.Output) {
	_ = a.mgr.NotifyEstablished(now, id, out)
}
