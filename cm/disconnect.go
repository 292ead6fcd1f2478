package cm

import (
	"time"

	"github.com/gorxe/gorxe/cm/mad"
)

// Disconnect starts or completes a disconnection (rdma_disconnect): in
// Established it sends a DREQ and waits in DREQSent for the DREP; in
// DREQRcvd it answers the peer's DREQ with a DREP. Either way the
// connection then spends a timewait before it is forgotten. privateData
// goes in the DREQ (at most 220 bytes) or DREP (224).
func (m *Manager) Disconnect(now time.Time, id ConnID, privateData []byte, out *Output) error {
	c, ok := m.conns[uint32(id)]
	if !ok || c.sidr {
		return ErrUnknownConn
	}
	switch c.state {
	case StateEstablished:
		msg := mad.New(mad.AttrDREQ, c.tid)
		if err := mad.DREQ(msg.Data()).Encode(&mad.DREQFields{
			LocalCommID:  c.id,
			RemoteCommID: c.remoteID,
			RemoteQPN:    c.attrs.RemoteQPN,
			PrivateData:  privateData,
		}); err != nil {
			return err
		}
		c.state = StateDREQSent
		c.arm(now, msg, c.cmTimeout)
		m.send(out, c.peer, msg)
		return nil
	case StateDREQRcvd:
		msg, err := m.newDREP(c, c.dreqTID, privateData)
		if err != nil {
			return err
		}
		c.reply = msg
		m.enterTimewait(now, c)
		m.send(out, c.peer, msg)
		return nil
	}
	return ErrState
}

func (m *Manager) newDREP(c *conn, tid uint64, privateData []byte) (mad.MAD, error) {
	msg := mad.New(mad.AttrDREP, tid)
	err := mad.DREP(msg.Data()).Encode(&mad.DREPFields{LocalCommID: c.id, RemoteCommID: c.remoteID, PrivateData: privateData})
	return msg, err
}

// onDREQ handles the peer's disconnection request.
func (m *Manager) onDREQ(now time.Time, from Addr, msg mad.MAD, out *Output) {
	r := mad.DREQ(msg.Data())
	tid := msg.Header().TID()
	c := m.conns[r.RemoteCommID()]
	if c == nil || c.sidr || r.LocalCommID() != c.remoteID {
		// A DREQ for a connection we no longer know: the peer is waiting for
		// a DREP, so give it one (the kernel's cm_issue_drep).
		m.counters.UnknownConn++
		reply := mad.New(mad.AttrDREP, tid)
		_ = mad.DREP(reply.Data()).Encode(&mad.DREPFields{LocalCommID: r.RemoteCommID(), RemoteCommID: r.LocalCommID()})
		m.send(out, from, reply)
		return
	}
	if r.RemoteQPN() != c.attrs.LocalQPN {
		// Not meant for the QP of this connection.
		m.counters.Unexpected++
		return
	}
	switch c.state {
	case StateREPSent, StateMRAREPRcvd, StateEstablished:
		c.stop()
		c.dreqTID = tid
		c.state = StateDREQRcvd
		out.event(Event{Type: EventDREQReceived, Conn: ConnID(c.id), State: c.state, ServiceID: c.serviceID, Peer: c.peer,
			PrivateData: clone(r.PrivateData())})
	case StateDREQSent:
		// Both sides disconnect at once: the peer's DREQ answers ours, and
		// ours is answered with a DREP (IBTA's DREQ Sent state).
		c.dreqTID = tid
		reply, _ := m.newDREP(c, tid, nil)
		c.reply = reply
		m.enterTimewait(now, c)
		m.send(out, c.peer, reply)
		out.event(Event{Type: EventDisconnected, Conn: ConnID(c.id), State: c.state, ServiceID: c.serviceID, Peer: c.peer,
			PrivateData: clone(r.PrivateData())})
	case StateTimewait:
		// Our DREP was lost (or we left through a DREP of our own DREQ): the
		// peer still waits for one.
		m.counters.Duplicates++
		reply, _ := m.newDREP(c, tid, nil)
		m.send(out, c.peer, reply)
	case StateDREQRcvd:
		m.counters.Duplicates++
	default:
		m.counters.Unexpected++
	}
}

// onDREP completes our disconnection.
func (m *Manager) onDREP(now time.Time, msg mad.MAD, out *Output) {
	r := mad.DREP(msg.Data())
	c := m.conns[r.RemoteCommID()]
	if c == nil || c.sidr || r.LocalCommID() != c.remoteID {
		m.counters.UnknownConn++
		return
	}
	switch c.state {
	case StateDREQSent:
		m.enterTimewait(now, c)
		out.event(Event{Type: EventDisconnected, Conn: ConnID(c.id), State: c.state, ServiceID: c.serviceID, Peer: c.peer,
			PrivateData: clone(r.PrivateData())})
	case StateTimewait:
		m.counters.Duplicates++ // crossed our own DREP in a simultaneous disconnect
	default:
		m.counters.Unexpected++
	}
}

// Destroy ends a connection whatever its state, telling the peer as
// ib_destroy_cm_id does: a REJ during the handshake (reason Timeout for an
// active side still waiting for a REP, ConsumerDefined otherwise), a single
// unanswered DREQ when established, a DREP when the peer asked to
// disconnect. A connection that may have carried traffic goes through
// timewait (and reports TimewaitExit); others are forgotten at once.
func (m *Manager) Destroy(now time.Time, id ConnID, out *Output) error {
	c, ok := m.conns[uint32(id)]
	if !ok {
		return ErrUnknownConn
	}
	switch c.state {
	case StateREQSent, StateMRAREQRcvd:
		_ = m.sendREJ(out, c, rejectedMsg(c.state), mad.RejTimeout, guidBytes(m.cfg.CAGUID), nil)
		m.remove(c)
	case StateREQRcvd, StateMRAREQSent, StateREPSent, StateMRAREPRcvd:
		_ = m.sendREJ(out, c, rejectedMsg(c.state), mad.RejConsumerDefined, nil, nil)
		m.remove(c)
	case StateREPRcvd, StateMRAREPSent:
		_ = m.sendREJ(out, c, rejectedMsg(c.state), mad.RejConsumerDefined, nil, nil)
		m.enterTimewait(now, c)
	case StateEstablished:
		_ = m.Disconnect(now, id, nil, out)
		m.enterTimewait(now, c)
	case StateDREQSent:
		m.enterTimewait(now, c)
	case StateDREQRcvd:
		_ = m.Disconnect(now, id, nil, out)
	case StateTimewait:
	default: // SIDR requests
		m.remove(c)
	}
	return nil
}
