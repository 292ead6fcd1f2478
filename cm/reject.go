package cm

import (
	"encoding/binary"
	"time"

	"github.com/gorxe/gorxe/cm/mad"
)

// convTID is the TID of a connection's handshake: the REQ's, which the
// passive side echoes and the active side formed.
func (c *conn) convTID() uint64 {
	if c.active {
		return c.tid
	}
	return c.peerTID
}

// rejectedMsg is the "Message Rejected" of a REJ sent in state s: the REQ
// or REP the consumer is refusing, or "other" when it cancels its own side
// (ib_cm's cm_format_rej makes the same choice).
func rejectedMsg(s State) mad.MsgType {
	switch s {
	case StateREQRcvd, StateMRAREQSent:
		return mad.MsgTypeREQ
	case StateREPRcvd, StateMRAREPSent:
		return mad.MsgTypeREP
	}
	return mad.MsgTypeOther
}

// sendREJ sends a REJ for connection c.
func (m *Manager) sendREJ(out *Output, c *conn, kind mad.MsgType, reason mad.RejectReason, ari, privateData []byte) error {
	msg := mad.New(mad.AttrREJ, c.convTID())
	if err := mad.REJ(msg.Data()).Encode(&mad.REJFields{
		LocalCommID:  c.id,
		RemoteCommID: c.remoteID,
		MsgRejected:  kind,
		Reason:       reason,
		ARI:          ari,
		PrivateData:  privateData,
	}); err != nil {
		return err
	}
	m.send(out, c.peer, msg)
	return nil
}

// issueREJ answers a message that belongs to no connection of ours (the
// kernel's cm_issue_rej): our local ID is the one the message named, the
// remote ID the sender's, and the TID is echoed.
func (m *Manager) issueREJ(out *Output, to Addr, tid uint64, localID, remoteID uint32, kind mad.MsgType, reason mad.RejectReason) {
	m.counters.Rejected++
	msg := mad.New(mad.AttrREJ, tid)
	_ = mad.REJ(msg.Data()).Encode(&mad.REJFields{LocalCommID: localID, RemoteCommID: remoteID, MsgRejected: kind, Reason: reason})
	m.send(out, to, msg)
}

// Reject refuses a REQ (passive side, before Accept), a REP (active side,
// before SendRTU), or cancels a handshake in progress, with the given reason
// (RDMA-CM's rdma_reject uses mad.RejConsumerDefined). ARI is at most 72
// bytes, privateData at most 148.
func (m *Manager) Reject(now time.Time, id ConnID, reason mad.RejectReason, ari, privateData []byte, out *Output) error {
	c, ok := m.conns[uint32(id)]
	if !ok || c.sidr {
		return ErrUnknownConn
	}
	switch c.state {
	case StateREQSent, StateMRAREQRcvd, StateREQRcvd, StateMRAREQSent, StateREPSent, StateMRAREPRcvd,
		StateREPRcvd, StateMRAREPSent:
	default:
		return ErrState
	}
	if err := m.sendREJ(out, c, rejectedMsg(c.state), reason, ari, privateData); err != nil {
		return err
	}
	if c.state == StateREPRcvd || c.state == StateMRAREPSent {
		// The peer has a QP ready for us; let stray packets die out.
		m.enterTimewait(now, c)
		return nil
	}
	m.remove(c)
	return nil
}

// onREJ handles a peer's rejection.
func (m *Manager) onREJ(now time.Time, msg mad.MAD, out *Output) {
	r := mad.REJ(msg.Data())
	c := m.conns[r.RemoteCommID()]
	if c != nil && (c.sidr || (c.remoteID != 0 && r.LocalCommID() != c.remoteID)) {
		c = nil
	}
	if c == nil && r.Reason() == mad.RejTimeout && len(r.ARI()) >= 8 {
		// A peer that gave up may not know our ID; it names itself by its
		// communication ID and CA GUID instead.
		c = m.byRemote[remoteKey{r.LocalCommID(), binary.BigEndian.Uint64(r.ARI())}]
	}
	if c == nil || c.sidr {
		m.counters.UnknownConn++
		return
	}
	switch c.state {
	case StateREQSent, StateMRAREQRcvd, StateREPSent, StateMRAREPRcvd, StateREQRcvd, StateMRAREQSent:
		if r.Reason() == mad.RejStaleConn {
			m.enterTimewait(now, c)
		} else {
			m.remove(c)
		}
	case StateDREQSent, StateREPRcvd, StateMRAREPSent, StateEstablished:
		m.enterTimewait(now, c)
	default:
		m.counters.Unexpected++
		return
	}
	out.event(Event{Type: EventRejected, Conn: ConnID(c.id), State: c.state, ServiceID: c.serviceID, Peer: c.peer,
		ARI: clone(r.ARI()), PrivateData: clone(r.PrivateData()), Err: &RejectError{Reason: r.Reason()}})
}
