package cm

import (
	"strconv"

	"github.com/gorxe/gorxe/cm/mad"
)

// EventType names what happened to a connection (after enum
// ib_cm_event_type, folded to what a consumer acts on).
type EventType uint8

// Event types.
const (
	// EventREQReceived: a REQ matched a listener. The connection is in
	// REQRcvd; the consumer creates its QP from Attrs (RTR needs them) and
	// calls Accept or Reject. PrivateData starts with the RDMA-CM header.
	EventREQReceived EventType = iota + 1
	// EventREPReceived: the passive side accepted. The consumer moves its
	// QP to RTR and RTS with Attrs, then calls SendRTU.
	EventREPReceived
	// EventEstablished: the connection is up (RTU received, the consumer's
	// NotifyEstablished, or our RTU sent).
	EventEstablished
	// EventRejected: the peer sent a REJ; Err is a *RejectError.
	EventRejected
	// EventUnreachable: a REQ or REP was retransmitted MaxCMRetries times
	// without an answer (Err is ErrTimeout). A REJ with reason Timeout went
	// to the peer and the connection is gone.
	EventUnreachable
	// EventMRAReceived: the peer needs more time (ServiceTimeout).
	EventMRAReceived
	// EventDREQReceived: the peer disconnects; the consumer moves its QP to
	// the error state and calls Disconnect to answer with a DREP.
	EventDREQReceived
	// EventDisconnected: our DREQ was answered (or, with Err ErrTimeout,
	// never was), or a simultaneous disconnect crossed ours; the connection
	// is in Timewait.
	EventDisconnected
	// EventTimewaitExit: the connection left Timewait and is gone; its QP
	// may be reused.
	EventTimewaitExit
	// EventSIDRREQReceived: a SIDR_REQ matched a listener; the consumer
	// calls ReplySIDR.
	EventSIDRREQReceived
	// EventSIDRREPReceived: the answer to ResolveSIDR (SIDRStatus, QPN,
	// QKey); the request is gone.
	EventSIDRREPReceived
	// EventSIDRError: a SIDR_REQ went unanswered (Err is ErrTimeout).
	EventSIDRError
)

var eventNames = [...]string{
	EventREQReceived:     "REQReceived",
	EventREPReceived:     "REPReceived",
	EventEstablished:     "Established",
	EventRejected:        "Rejected",
	EventUnreachable:     "Unreachable",
	EventMRAReceived:     "MRAReceived",
	EventDREQReceived:    "DREQReceived",
	EventDisconnected:    "Disconnected",
	EventTimewaitExit:    "TimewaitExit",
	EventSIDRREQReceived: "SIDRREQReceived",
	EventSIDRREPReceived: "SIDRREPReceived",
	EventSIDRError:       "SIDRError",
}

func (t EventType) String() string {
	if t != 0 && int(t) < len(eventNames) {
		return eventNames[t]
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// ConnID identifies a connection (or SIDR request) of a manager: its local
// communication ID.
type ConnID uint32

// Event is one thing the consumer must learn. Fields beyond Type, Conn and
// State are set only by the event types that document them.
type Event struct {
	Type  EventType
	Conn  ConnID
	State State // the connection's state after the event
	// ServiceID and Peer identify the connection's service and remote CM.
	ServiceID uint64
	Peer      Addr
	// Attrs are the negotiated QP attributes (REQReceived, REPReceived,
	// Established).
	Attrs QPAttrs
	// PrivateData is a copy of the message's whole private-data area (CM
	// messages do not carry its length): REQ, REP, RTU, REJ, DREQ, DREP,
	// SIDR_REQ, SIDR_REP.
	PrivateData []byte
	// ECE is the peer's Enhanced Connection Establishment: the REQ's
	// (REQReceived) or the REP's (REPReceived).
	ECE ECE
	// ARI is a copy of a REJ's additional rejection information.
	ARI []byte
	// ServiceTimeout is an MRA's service timeout exponent.
	ServiceTimeout uint8
	// SIDRStatus, QPN and QKey are a SIDR_REP's answer.
	SIDRStatus mad.SIDRStatus
	QPN        uint32
	QKey       uint32
	// Err is the cause for Rejected (*RejectError), Unreachable, SIDRError
	// and an unanswered DREQ (ErrTimeout).
	Err error
}
