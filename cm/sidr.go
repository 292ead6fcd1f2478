package cm

import (
	"time"

	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/packet"
)

// SIDRParams ask a remote CM which UD QP serves a service ID (what
// rdma_connect does for RDMA_PS_UDP ids: udaddy, ucmatose -p UDP).
type SIDRParams struct {
	ServiceID uint64
	RemoteGID [16]byte
	PKey      uint16 // 0 means packet.DefaultPKey
	// PrivateData goes in the SIDR_REQ (at most 216 bytes); RDMA-CM starts
	// it with the CMA header.
	PrivateData []byte
}

// SIDRReply is the passive side's answer to a SIDR_REQ.
type SIDRReply struct {
	Status SIDRStatus
	QPN    uint32
	QKey   uint32 // RDMA-CM uses mad.UDPQKey
	// Info is the additional information (at most 72 bytes), PrivateData
	// at most 136 bytes.
	Info        []byte
	PrivateData []byte
}

// SIDRStatus is mad.SIDRStatus, re-exported for consumers of this package.
type SIDRStatus = mad.SIDRStatus

// ResolveSIDR sends a SIDR_REQ and returns the request's ID; the answer
// arrives as EventSIDRREPReceived (or EventSIDRError when the peer never
// answers).
func (m *Manager) ResolveSIDR(now time.Time, p SIDRParams, out *Output) (ConnID, error) {
	if len(p.PrivateData) > mad.SIDRREQPrivateDataSize {
		return 0, ErrPrivateDataTooLong
	}
	c, err := m.newConn()
	if err != nil {
		return 0, err
	}
	pkey := p.PKey
	if pkey == 0 {
		pkey = packet.DefaultPKey
	}
	c.sidr, c.active = true, true
	c.serviceID = p.ServiceID
	c.peer = Addr{GID: p.RemoteGID, QPN: QP1}
	c.attrs.PKey = pkey
	c.maxRetries = int(m.cfg.MaxCMRetries)
	msg := mad.New(mad.AttrSIDRREQ, c.tid)
	_ = mad.SIDRREQ(msg.Data()).Encode(&mad.SIDRREQFields{RequestID: c.id, PKey: pkey, ServiceID: p.ServiceID, PrivateData: p.PrivateData})
	c.state = StateSIDRREQSent
	c.arm(now, msg, m.cfg.responseTimeout(m.cfg.CMResponseTimeout))
	m.send(out, c.peer, msg)
	return ConnID(c.id), nil
}

// onSIDRREP delivers the answer to one of our SIDR requests.
func (m *Manager) onSIDRREP(now time.Time, msg mad.MAD, out *Output) {
	r := mad.SIDRREP(msg.Data())
	c := m.conns[r.RequestID()]
	if c == nil || !c.sidr || !c.active || c.state != StateSIDRREQSent {
		m.counters.UnknownConn++
		return
	}
	m.remove(c)
	out.event(Event{Type: EventSIDRREPReceived, Conn: ConnID(c.id), State: StateIdle, ServiceID: c.serviceID, Peer: c.peer,
		SIDRStatus: r.Status(), QPN: r.QPN(), QKey: r.QKey(), ARI: clone(r.Info()), PrivateData: clone(r.PrivateData())})
}

// onSIDRREQ handles a peer's service ID resolution request.
func (m *Manager) onSIDRREQ(now time.Time, from Addr, msg mad.MAD, out *Output) {
	r := mad.SIDRREQ(msg.Data())
	tid := msg.Header().TID()
	if c := m.bySIDR[sidrKey{r.RequestID(), from.GID}]; c != nil {
		m.counters.Duplicates++
		if c.reply != nil {
			m.send(out, c.peer, c.reply)
		}
		return
	}
	if _, ok := m.listeners[r.ServiceID()]; !ok {
		m.counters.NoListener++
		reply := mad.New(mad.AttrSIDRREP, tid)
		_ = mad.SIDRREP(reply.Data()).Encode(&mad.SIDRREPFields{RequestID: r.RequestID(), Status: mad.SIDRUnsupported, ServiceID: r.ServiceID()})
		m.send(out, from, reply)
		return
	}
	c, err := m.newConn()
	if err != nil {
		reply := mad.New(mad.AttrSIDRREP, tid)
		_ = mad.SIDRREP(reply.Data()).Encode(&mad.SIDRREPFields{RequestID: r.RequestID(), Status: mad.SIDRReject, ServiceID: r.ServiceID()})
		m.send(out, from, reply)
		return
	}
	c.sidr = true
	c.serviceID = r.ServiceID()
	c.peer = from
	c.peerTID = tid
	c.remoteID = r.RequestID()
	c.attrs.PKey = r.PKey()
	m.register(c)
	c.state = StateSIDRREQRcvd
	out.event(Event{Type: EventSIDRREQReceived, Conn: ConnID(c.id), State: c.state, ServiceID: c.serviceID, Peer: c.peer,
		Attrs: c.attrs, PrivateData: clone(r.PrivateData())})
}

// ReplySIDR answers a SIDR_REQ. The request is kept for one response
// timeout so that a retransmitted SIDR_REQ gets the same answer.
func (m *Manager) ReplySIDR(now time.Time, id ConnID, rep SIDRReply, out *Output) error {
	c, ok := m.conns[uint32(id)]
	if !ok || !c.sidr {
		return ErrUnknownConn
	}
	if c.state != StateSIDRREQRcvd {
		return ErrState
	}
	if rep.QPN > mad.QPNMask {
		return ErrInvalidParam
	}
	msg := mad.New(mad.AttrSIDRREP, c.peerTID)
	if err := mad.SIDRREP(msg.Data()).Encode(&mad.SIDRREPFields{RequestID: c.remoteID, Status: rep.Status, QPN: rep.QPN,
		ServiceID: c.serviceID, QKey: rep.QKey, Info: rep.Info, PrivateData: rep.PrivateData}); err != nil {
		return err
	}
	c.reply = msg
	c.state = StateTimewait
	c.deadline = now.Add(m.cfg.responseTimeout(m.cfg.CMResponseTimeout))
	m.send(out, c.peer, msg)
	return nil
}
