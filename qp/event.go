package qp

import (
	"fmt"

	"github.com/gorxe/gorxe/cq"
)

// EventType is an asynchronous event, with the values of enum ibv_event_type.
type EventType uint8

// Asynchronous event types (IBV_EVENT_*).
const (
	EventCQErr            EventType = 0
	EventQPFatal          EventType = 1
	EventQPReqErr         EventType = 2
	EventQPAccessErr      EventType = 3
	EventCommEst          EventType = 4
	EventSQDrained        EventType = 5
	EventPathMig          EventType = 6
	EventPathMigErr       EventType = 7
	EventDeviceFatal      EventType = 8
	EventPortActive       EventType = 9
	EventPortErr          EventType = 10
	EventLIDChange        EventType = 11
	EventPKeyChange       EventType = 12
	EventSMChange         EventType = 13
	EventSRQErr           EventType = 14
	EventSRQLimitReached  EventType = 15
	EventQPLastWQEReached EventType = 16
	EventClientReregister EventType = 17
	EventGIDChange        EventType = 18
	EventWQFatal          EventType = 19
	numEventTypes                   = 20
)

// eventText holds the texts of ibv_event_type_str.
var eventText = [numEventTypes]string{
	EventCQErr:            "CQ error",
	EventQPFatal:          "local work queue catastrophic error",
	EventQPReqErr:         "invalid request local work queue error",
	EventQPAccessErr:      "local access violation work queue error",
	EventCommEst:          "communication established",
	EventSQDrained:        "send queue drained",
	EventPathMig:          "path migrated",
	EventPathMigErr:       "path migration request error",
	EventDeviceFatal:      "local catastrophic error",
	EventPortActive:       "port active",
	EventPortErr:          "port error",
	EventLIDChange:        "LID change",
	EventPKeyChange:       "P_Key change",
	EventSMChange:         "SM change",
	EventSRQErr:           "SRQ catastrophic error",
	EventSRQLimitReached:  "SRQ limit reached",
	EventQPLastWQEReached: "last WQE reached",
	EventClientReregister: "client reregistration",
	EventGIDChange:        "GID table change",
	EventWQFatal:          "WQ fatal",
}

// String returns the text ibv_event_type_str gives ("unknown" outside the enum).
func (t EventType) String() string {
	if t < numEventTypes {
		return eventText[t]
	}
	return "unknown"
}

// Event is one asynchronous event (struct ibv_async_event); the field matching the event's kind is
// set (QP, SRQ, CQ, or PortNum for port events).
type Event struct {
	Type    EventType
	QP      *QP
	SRQ     *SRQ
	CQ      *cq.CQ
	PortNum uint8
}

func (e Event) String() string {
	switch {
	case e.QP != nil:
		return fmt.Sprintf("%v on QP %d", e.Type, e.QP.QPN())
	case e.SRQ != nil:
		return fmt.Sprintf("%v on SRQ", e.Type)
	case e.CQ != nil:
		return fmt.Sprintf("%v on CQ", e.Type)
	}
	return fmt.Sprintf("%v on port %d", e.Type, e.PortNum)
}

// EventSink receives the asynchronous events of QPs and SRQs; the device implements it to feed
// ibv_get_async_event. HandleEvent may be called with queue locks held: it must record or hand
// the event off and return, never block or call back into QPs, SRQs or CQs.
type EventSink interface {
	HandleEvent(Event)
}
