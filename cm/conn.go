package cm

import (
	"time"

	"github.com/gorxe/gorxe/cm/mad"
)

// conn is the state of one connection or SIDR request.
type conn struct {
	id        uint32
	state     State
	active    bool
	sidr      bool
	serviceID uint64
	peer      Addr

	remoteID   uint32 // the peer's communication ID, 0 until known
	remoteGUID uint64 // the peer's CA GUID
	registered bool   // in byRemote and byQPN

	// tid is the TID of the messages this end originates; peerTID the TID
	// of the peer's REQ (or DREQ, SIDR_REQ) that our reply must echo.
	tid     uint64
	peerTID uint64
	// dreqTID is the TID of the peer's DREQ, which our DREP echoes.
	dreqTID uint64

	attrs QPAttrs

	// pending is the message retransmitted on timeout (REQ, REP, DREQ,
	// SIDR_REQ); nil when nothing awaits an answer.
	pending    mad.MAD
	timeout    time.Duration // between retransmissions of pending
	retries    int           // retransmissions so far
	maxRetries int
	// deadline is when tick must look at the connection: the next
	// retransmission or the end of timewait. Zero when no timer runs.
	deadline time.Time

	// reply is the last answer to the peer, re-sent when its message comes
	// again (MRA, REP via pending, RTU, DREP, SIDR_REP).
	reply mad.MAD

	// cmTimeout is how long the peer may take to answer us, from the REQ's
	// CM response timeouts.
	cmTimeout time.Duration
}

// arm starts retransmitting m every timeout, up to maxRetries times.
func (c *conn) arm(now time.Time, m mad.MAD, timeout time.Duration) {
	c.pending = m
	c.timeout = timeout
	c.retries = 0
	c.deadline = now.Add(timeout)
}

// stop ends retransmission; the peer answered.
func (c *conn) stop() {
	c.pending = nil
	c.deadline = time.Time{}
}

func (c *conn) info() ConnInfo {
	return ConnInfo{
		ID:           ConnID(c.id),
		State:        c.state,
		Active:       c.active,
		ServiceID:    c.serviceID,
		Peer:         c.peer,
		RemoteCommID: c.remoteID,
		RemoteCAGUID: c.remoteGUID,
		Attrs:        c.attrs,
	}
}

// ConnInfo is a snapshot of one connection.
type ConnInfo struct {
	ID           ConnID
	State        State
	Active       bool
	ServiceID    uint64
	Peer         Addr
	RemoteCommID uint32
	RemoteCAGUID uint64
	Attrs        QPAttrs
}

// remoteKey identifies a peer's end of a connection: its communication ID
// is unique only together with its CA GUID.
type remoteKey struct {
	commID uint32
	guid   uint64
}

// qpKey identifies a peer's QP; two live connections to the same QP mean one
// of them is stale.
type qpKey struct {
	qpn  uint32
	guid uint64
}

// sidrKey identifies a peer's SIDR request: its request ID, unique per
// requesting port.
type sidrKey struct {
	requestID uint32
	gid       [16]byte
}
