package cm

import (
	"time"

	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/packet"
)

// Path describes the route to the passive side. On RoCEv2 the GIDs are the
// two IP addresses and the rest is the IP header's: the flow label, traffic
// class and hop limit.
type Path struct {
	LocalGID     [16]byte
	RemoteGID    [16]byte
	FlowLabel    uint32 // 20 bits
	TrafficClass uint8
	HopLimit     uint8
	SL           uint8
	PacketRate   uint8
	PKey         uint16  // 0 means packet.DefaultPKey
	MTU          mad.MTU // active IB MTU of the path
}

// ConnectParams are the active side's half of a connection (struct
// ib_cm_req_param).
type ConnectParams struct {
	ServiceID uint64
	Path      Path
	Transport mad.TransportType // RC or UC
	LocalQPN  uint32
	// ResponderResources is how many RDMA READ/atomic requests we accept
	// outstanding; InitiatorDepth how many we want to issue.
	ResponderResources uint8
	InitiatorDepth     uint8
	RetryCount         uint8 // 0..7
	RNRRetryCount      uint8 // 0..7; what the passive side's QP should use
	SRQ                bool
	FlowControl        bool
	// PrivateData goes in the REQ (at most 92 bytes). RDMA-CM consumers
	// start it with the CMA header (mad.AppendCMAPrivateData).
	PrivateData []byte
	// ECE goes in the REQ; the passive side's answer is the REPReceived
	// event's ECE.
	ECE ECE
}

// Connect starts a connection: it sends a REQ to the CM at
// params.Path.RemoteGID and returns the new connection, in REQSent.
func (m *Manager) Connect(now time.Time, p ConnectParams, out *Output) (ConnID, error) {
	if p.LocalQPN > mad.QPNMask || !p.Path.MTU.Valid() || p.RetryCount > 7 || p.RNRRetryCount > 7 ||
		(p.Transport != mad.TransportRC && p.Transport != mad.TransportUC) || !p.ECE.valid() {
		return 0, ErrInvalidParam
	}
	if len(p.PrivateData) > mad.REQPrivateDataSize {
		return 0, ErrPrivateDataTooLong
	}
	c, err := m.newConn()
	if err != nil {
		return 0, err
	}
	pkey := p.Path.PKey
	if pkey == 0 {
		pkey = packet.DefaultPKey
	}
	c.active = true
	c.serviceID = p.ServiceID
	c.peer = Addr{GID: p.Path.RemoteGID, QPN: QP1}
	c.maxRetries = int(m.cfg.MaxCMRetries)
	c.cmTimeout = m.cfg.responseTimeout(m.cfg.CMResponseTimeout)
	c.attrs = QPAttrs{
		Transport:    p.Transport,
		LocalQPN:     p.LocalQPN,
		RQPSN:        m.cfg.Rand() & mad.QPNMask,
		PathMTU:      p.Path.MTU,
		PKey:         pkey,
		RetryCount:   p.RetryCount,
		SRQ:          p.SRQ,
		LocalGID:     p.Path.LocalGID,
		RemoteGID:    p.Path.RemoteGID,
		FlowLabel:    p.Path.FlowLabel & 0xFFFFF,
		TrafficClass: p.Path.TrafficClass,
		HopLimit:     p.Path.HopLimit,
		SL:           p.Path.SL & 0xF,
	}
	path := mad.PathFields{
		LocalGID:        p.Path.LocalGID,
		RemoteGID:       p.Path.RemoteGID,
		FlowLabel:       p.Path.FlowLabel,
		PacketRate:      p.Path.PacketRate,
		TrafficClass:    p.Path.TrafficClass,
		HopLimit:        p.Path.HopLimit,
		SL:              p.Path.SL,
		SubnetLocal:     p.Path.HopLimit <= 1,
		LocalAckTimeout: mad.AckTimeout(m.cfg.CAAckDelay, m.cfg.PacketLifeTime),
	}
	if p.Path.HopLimit > 1 {
		// RoCE has no LIDs; a routed path carries the permissive LID, as
		// the kernel's CM fills it.
		path.LocalLID, path.RemoteLID = mad.PermissiveLID, mad.PermissiveLID
	}
	msg := newECEMAD(mad.AttrREQ, c.tid, p.ECE)
	_ = mad.REQ(msg.Data()).Encode(&mad.REQFields{
		LocalCommID:             c.id,
		VendorID:                p.ECE.VendorID,
		ServiceID:               p.ServiceID,
		LocalCAGUID:             m.cfg.CAGUID,
		LocalQPN:                p.LocalQPN,
		ResponderResources:      p.ResponderResources,
		InitiatorDepth:          p.InitiatorDepth,
		RemoteCMResponseTimeout: m.cfg.CMResponseTimeout,
		TransportType:           p.Transport,
		EndToEndFlowControl:     p.FlowControl,
		StartingPSN:             c.attrs.RQPSN,
		LocalCMResponseTimeout:  m.cfg.CMResponseTimeout,
		RetryCount:              p.RetryCount,
		PKey:                    pkey,
		PathMTU:                 p.Path.MTU,
		RNRRetryCount:           p.RNRRetryCount,
		MaxCMRetries:            m.cfg.MaxCMRetries,
		SRQ:                     p.SRQ,
		PrimaryPath:             path,
		PrivateData:             p.PrivateData,
	})
	c.state = StateREQSent
	c.arm(now, msg, c.cmTimeout)
	m.send(out, c.peer, msg)
	return ConnID(c.id), nil
}

// onREP handles the passive side's answer to our REQ.
func (m *Manager) onREP(now time.Time, from Addr, msg mad.MAD, out *Output) {
	r := mad.REP(msg.Data())
	c := m.conns[r.RemoteCommID()]
	if c == nil || !c.active || c.sidr {
		// IBTA: a REP for no connection of ours is answered with REJ
		// "invalid communication ID", so the peer stops retransmitting.
		m.counters.UnknownConn++
		m.issueREJ(out, from, msg.Header().TID(), r.RemoteCommID(), r.LocalCommID(), mad.MsgTypeREP, mad.RejInvalidCommID)
		return
	}
	switch c.state {
	case StateREQSent, StateMRAREQRcvd:
	case StateREPRcvd:
		// The consumer is still bringing its QP up: ask for patience, as
		// ib_cm does on a duplicate REP (IB_CM_MRA_FLAG_DELAY).
		if r.LocalCommID() == c.remoteID {
			m.counters.Duplicates++
			c.reply = m.newMRA(c, mad.MsgTypeREP, c.peerTID)
			c.state = StateMRAREPSent
			m.send(out, c.peer, c.reply)
		}
		return
	case StateMRAREPSent, StateEstablished:
		// Our MRA or RTU was lost: send it again.
		if r.LocalCommID() == c.remoteID && c.reply != nil {
			m.counters.Duplicates++
			m.send(out, c.peer, c.reply)
		}
		return
	default:
		m.counters.Unexpected++
		return
	}
	if other := m.byRemote[remoteKey{r.LocalCommID(), r.LocalCAGUID()}]; other != nil ||
		m.byQPN[qpKey{r.LocalQPN(), r.LocalCAGUID()}] != nil {
		// The peer's ID or QP already belongs to another connection: one of
		// them is stale. Refuse this one (IBTA 12.9.8.3.1).
		m.counters.Rejected++
		c.peerTID = msg.Header().TID()
		c.remoteID = r.LocalCommID()
		_ = m.sendREJ(out, c, mad.MsgTypeREP, mad.RejStaleConn, nil, nil)
		c.remoteID = 0
		m.remove(c)
		out.event(Event{Type: EventUnreachable, Conn: ConnID(c.id), State: StateIdle, ServiceID: c.serviceID, Peer: c.peer,
			Err: &RejectError{Reason: mad.RejStaleConn}})
		return
	}
	c.stop()
	c.peerTID = msg.Header().TID()
	c.remoteID = r.LocalCommID()
	c.remoteGUID = r.LocalCAGUID()
	c.attrs.RemoteQPN = r.LocalQPN()
	c.attrs.SQPSN = r.StartingPSN()
	// The passive side's responder resources bound our initiator depth and
	// vice versa (ib_cm swaps them the same way).
	c.attrs.MaxRdAtomic = r.ResponderResources()
	c.attrs.MaxDestRdAtomic = r.InitiatorDepth()
	c.attrs.RNRRetry = r.RNRRetryCount()
	c.attrs.Timeout = mad.AckTimeout(r.TargetAckDelay(), m.cfg.PacketLifeTime)
	m.register(c)
	c.state = StateREPRcvd
	out.event(Event{Type: EventREPReceived, Conn: ConnID(c.id), State: c.state, ServiceID: c.serviceID, Peer: c.peer,
		Attrs: c.attrs, PrivateData: clone(r.PrivateData()), ECE: ECE{VendorID: r.VendorID(), Options: msg.Header().AttrMod()}})
}

// SendRTU completes the handshake on the active side after the consumer
// has moved its QP to RTS: it sends the RTU and the connection becomes
// Established.
func (m *Manager) SendRTU(now time.Time, id ConnID, privateData []byte, out *Output) error {
	c, ok := m.conns[uint32(id)]
	if !ok {
		return ErrUnknownConn
	}
	if c.state != StateREPRcvd && c.state != StateMRAREPSent {
		return ErrState
	}
	msg := mad.New(mad.AttrRTU, c.tid)
	if err := mad.RTU(msg.Data()).Encode(&mad.RTUFields{LocalCommID: c.id, RemoteCommID: c.remoteID, PrivateData: privateData}); err != nil {
		return err
	}
	c.reply = msg
	c.state = StateEstablished
	m.send(out, c.peer, msg)
	out.event(Event{Type: EventEstablished, Conn: id, State: c.state, ServiceID: c.serviceID, Peer: c.peer, Attrs: c.attrs})
	return nil
}

// onMRA handles a peer's request for patience: the acknowledged message is
// no longer retransmitted at the usual rate but after the service timeout
// the MRA names.
func (m *Manager) onMRA(now time.Time, msg mad.MAD, out *Output) {
	r := mad.MRA(msg.Data())
	c := m.conns[r.RemoteCommID()]
	if c == nil || c.sidr {
		m.counters.UnknownConn++
		return
	}
	switch {
	case r.MsgMRAed() == mad.MsgTypeREQ && c.state == StateREQSent:
		c.state = StateMRAREQRcvd
	case r.MsgMRAed() == mad.MsgTypeREP && c.state == StateREPSent && r.LocalCommID() == c.remoteID:
		c.state = StateMRAREPRcvd
	case c.state == StateMRAREQRcvd || c.state == StateMRAREPRcvd:
		m.counters.Duplicates++
		return
	default:
		m.counters.Unexpected++
		return
	}
	c.timeout = m.cfg.responseTimeout(r.ServiceTimeout())
	c.deadline = now.Add(c.timeout)
	out.event(Event{Type: EventMRAReceived, Conn: ConnID(c.id), State: c.state, ServiceID: c.serviceID, Peer: c.peer,
		ServiceTimeout: r.ServiceTimeout()})
}

// newMRA builds an MRA for the peer's message kind, echoing tid.
func (m *Manager) newMRA(c *conn, kind mad.MsgType, tid uint64) mad.MAD {
	msg := mad.New(mad.AttrMRA, tid)
	_ = mad.MRA(msg.Data()).Encode(&mad.MRAFields{
		LocalCommID:    c.id,
		RemoteCommID:   c.remoteID,
		MsgMRAed:       kind,
		ServiceTimeout: m.cfg.MRAServiceTimeout,
	})
	return msg
}
