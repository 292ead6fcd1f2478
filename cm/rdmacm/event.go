package rdmacm

import "fmt"

// EventType names what happened to a connection (the RDMA_CM_EVENT_* a librdmacm program sees after
// its connect or accept).
type EventType uint8

// Event types.
const (
	// EventEstablished: the handshake completed (RDMA_CM_EVENT_ESTABLISHED).
	EventEstablished EventType = iota + 1
	// EventRejected: the peer refused the connection; Err is a *cm.RejectError with its reason.
	EventRejected
	// EventUnreachable: the peer never answered (Err matches cm.ErrTimeout).
	EventUnreachable
	// EventDisconnected: the peer disconnected, or answered (or never answered) our DREQ, or the
	// device closed (Err matches gorxe.ErrDeviceClosed). The QP is in the error state.
	EventDisconnected
	// EventTimewaitExit: the connection is gone; the last event. A connection its device's
	// closing ended has none: Done closes at once.
	EventTimewaitExit
)

var eventNames = [...]string{
	EventEstablished:  "established",
	EventRejected:     "rejected",
	EventUnreachable:  "unreachable",
	EventDisconnected: "disconnected",
	EventTimewaitExit: "timewait exit",
}

// String returns the event's name.
func (t EventType) String() string {
	if int(t) < len(eventNames) && eventNames[t] != "" {
		return eventNames[t]
	}
	return fmt.Sprintf("EventType(%d)", uint8(t))
}

// Event is one thing that happened to a connection.
type Event struct {
	Type EventType
	// Err is the cause of a rejection, of an unreachable peer, or of a disconnection whose DREQ
	// went unanswered.
	Err error
	// PrivateData is the private-data area of the message behind the event (REJ, DREQ, DREP),
	// zero-padded as CM messages carry no length.
	PrivateData []byte
}
