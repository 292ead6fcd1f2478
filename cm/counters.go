package cm

import "github.com/gorxe/gorxe/cm/mad"

// Counters count what a manager received and sent, and especially what it
// dropped: hostile or stale input is counted, never reported as an error.
type Counters struct {
	Received    uint64 // MADs handed to Receive
	Sent        uint64 // MADs queued for sending, retransmissions included
	Retransmits uint64 // retransmissions after a response timeout
	Malformed   uint64 // not a CM MAD this package decodes (see mad.Parse)
	Duplicates  uint64 // duplicates answered or ignored
	UnknownConn uint64 // messages for no connection of ours
	Unexpected  uint64 // messages a connection's state does not accept
	NoListener  uint64 // REQs and SIDR_REQs for a service ID nobody listens on
	BacklogFull uint64 // REQs dropped unanswered for want of room (DropREQ: a full listen backlog)
	Rejected    uint64 // REJs sent by the manager itself (not by the consumer)
	Timeouts    uint64 // messages that ran out of retries

	// PerMessage splits the well-formed MADs received, the MADs sent and the retransmissions by
	// CM message; Message reads it.
	PerMessage [NumMessages]MessageCounters
}

// NumMessages is the number of CM messages, REQ to APR (IBTA Table 104).
const NumMessages = int(mad.AttrAPR-mad.AttrREQ) + 1

// MessageCounters count one CM message.
type MessageCounters struct {
	Received    uint64 // well-formed MADs of this message received
	Sent        uint64 // sent, retransmissions included
	Retransmits uint64 // retransmissions after a response timeout
}

// Message returns the counters of message a, and zero counters for an attribute that names no
// CM message.
func (c *Counters) Message(a mad.AttrID) MessageCounters {
	if !a.Known() {
		return MessageCounters{}
	}
	return c.PerMessage[a-mad.AttrREQ]
}

// message returns the counters of the message m carries, or nil for a MAD that is none.
func (c *Counters) message(m mad.MAD) *MessageCounters {
	a := m.Header().AttrID()
	if !a.Known() {
		return nil
	}
	return &c.PerMessage[a-mad.AttrREQ]
}
