package cm

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
	Rejected    uint64 // REJs sent by the manager itself (not by the consumer)
	Timeouts    uint64 // messages that ran out of retries
}
