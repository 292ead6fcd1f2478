package cm

import (
	"time"

	"github.com/gorxe/gorxe/cm/mad"
)

// AcceptParams are the passive side's half of a connection (struct
// ib_cm_rep_param).
type AcceptParams struct {
	LocalQPN uint32
	// ResponderResources is how many RDMA READ/atomic requests we accept
	// outstanding; InitiatorDepth how many we issue. The REQ's values are in
	// the REQReceived event's Attrs (MaxDestRdAtomic, MaxRdAtomic) for a
	// consumer that wants to match them.
	ResponderResources uint8
	InitiatorDepth     uint8
	RNRRetryCount      uint8 // 0..7; what the active side's QP should use
	SRQ                bool
	FlowControl        bool
	// PrivateData goes in the REP (at most 196 bytes; no CMA header).
	PrivateData []byte
	// ECE goes in the REP: the kernel sends what its consumer gives, and
	// librdmacm gives the REQ's vendor ID with its own options.
	ECE ECE
}

// onREQ handles a connection request: a duplicate of one we know, or a new
// one for a listener.
func (m *Manager) onREQ(now time.Time, from Addr, msg mad.MAD, out *Output) {
	r := mad.REQ(msg.Data())
	tid := msg.Header().TID()
	if c := m.byRemote[remoteKey{r.LocalCommID(), r.LocalCAGUID()}]; c != nil {
		m.dupREQ(c, from, tid, r, out)
		return
	}
	reject := func(reason mad.RejectReason) {
		m.issueREJ(out, from, tid, 0, r.LocalCommID(), mad.MsgTypeREQ, reason)
	}
	if _, ok := m.listeners[r.ServiceID()]; !ok {
		m.counters.NoListener++
		reject(mad.RejInvalidServiceID)
		return
	}
	switch {
	case r.TransportType() != mad.TransportRC && r.TransportType() != mad.TransportUC:
		reject(mad.RejInvalidTransportType)
		return
	case !r.PathMTU().Valid():
		reject(mad.RejInvalidMTU)
		return
	case m.byQPN[qpKey{r.LocalQPN(), r.LocalCAGUID()}] != nil:
		// The peer's QP is still part of a connection we know (perhaps in
		// timewait): the new request must wait until that one is gone.
		reject(mad.RejStaleConn)
		return
	}
	c, err := m.newConn()
	if err != nil {
		reject(mad.RejNoResources)
		return
	}
	p := r.PrimaryPath()
	c.serviceID = r.ServiceID()
	c.peer = from
	c.peerTID = tid
	c.remoteID = r.LocalCommID()
	c.remoteGUID = r.LocalCAGUID()
	c.maxRetries = int(r.MaxCMRetries())
	c.cmTimeout = m.cfg.responseTimeout(r.LocalCMResponseTimeout())
	c.attrs = QPAttrs{
		Transport: r.TransportType(),
		RemoteQPN: r.LocalQPN(),
		SQPSN:     r.StartingPSN(),
		// Chosen now, not in Accept: the consumer moves its QP to RTR
		// before it accepts, as librdmacm does.
		RQPSN:           m.cfg.Rand() & mad.QPNMask,
		PathMTU:         r.PathMTU(),
		PKey:            r.PKey(),
		MaxDestRdAtomic: r.InitiatorDepth(),
		MaxRdAtomic:     r.ResponderResources(),
		RetryCount:      r.RetryCount(),
		RNRRetry:        r.RNRRetryCount(),
		Timeout:         p.LocalAckTimeout,
		LocalGID:        p.RemoteGID,
		RemoteGID:       p.LocalGID,
		FlowLabel:       p.FlowLabel,
		TrafficClass:    p.TrafficClass,
		HopLimit:        p.HopLimit,
		SL:              p.SL,
	}
	m.register(c)
	c.state = StateREQRcvd
	out.event(Event{Type: EventREQReceived, Conn: ConnID(c.id), State: c.state, ServiceID: c.serviceID, Peer: c.peer,
		Attrs: c.attrs, PrivateData: clone(r.PrivateData()), ECE: ECE{VendorID: r.VendorID(), Options: msg.Header().AttrMod()}})
}

// dupREQ answers a REQ we have seen before (the active side retransmitted
// it because our answer was slow or lost).
func (m *Manager) dupREQ(c *conn, from Addr, tid uint64, r mad.REQ, out *Output) {
	m.counters.Duplicates++
	switch c.state {
	case StateREQRcvd:
		// The consumer has not decided yet: tell the peer to wait rather than
		// let it exhaust its retries (ib_cm's delayed MRA).
		c.reply = m.newMRA(c, mad.MsgTypeREQ, c.peerTID)
		c.state = StateMRAREQSent
		m.send(out, c.peer, c.reply)
	case StateMRAREQSent:
		m.send(out, c.peer, c.reply)
	case StateREPSent, StateMRAREPRcvd:
		m.send(out, c.peer, c.pending)
	case StateTimewait:
		// An old connection's REQ: the peer must not reuse it.
		m.issueREJ(out, from, tid, c.id, r.LocalCommID(), mad.MsgTypeREQ, mad.RejStaleConn)
	}
}

// DropREQ forgets a REQ without answering it, for a consumer that has no room for the request
// now. RDMA-CM drops a REQ that finds its listener's backlog full: its handler fails with ENOMEM,
// and ib_cm then returns the connection to idle without a REJ so that the active side keeps
// retransmitting. Nothing of the REQ is kept, so a retransmission is a new request, which the
// consumer may queue once it has made room. Only a REQ the consumer has just been given
// (REQRcvd) can be dropped: after our MRA the peer would wait its service timeout in silence.
func (m *Manager) DropREQ(id ConnID) error {
	c, ok := m.conns[uint32(id)]
	if !ok || c.sidr {
		return ErrUnknownConn
	}
	if c.state != StateREQRcvd {
		return ErrState
	}
	m.counters.BacklogFull++
	m.remove(c)
	return nil
}

// Accept answers a REQ with a REP. The consumer has created its QP and
// moved it to RTR with the event's Attrs (updated here with p); the
// connection waits in REPSent for the RTU.
func (m *Manager) Accept(now time.Time, id ConnID, p AcceptParams, out *Output) error {
	c, ok := m.conns[uint32(id)]
	if !ok || c.sidr {
		return ErrUnknownConn
	}
	if c.state != StateREQRcvd && c.state != StateMRAREQSent {
		return ErrState
	}
	if p.LocalQPN > mad.QPNMask || p.RNRRetryCount > 7 || !p.ECE.valid() {
		return ErrInvalidParam
	}
	if len(p.PrivateData) > mad.REPPrivateDataSize {
		return ErrPrivateDataTooLong
	}
	c.attrs.LocalQPN = p.LocalQPN
	c.attrs.MaxDestRdAtomic = p.ResponderResources
	c.attrs.MaxRdAtomic = p.InitiatorDepth
	c.attrs.SRQ = p.SRQ
	msg := newECEMAD(mad.AttrREP, c.peerTID, p.ECE)
	_ = mad.REP(msg.Data()).Encode(&mad.REPFields{
		LocalCommID:         c.id,
		RemoteCommID:        c.remoteID,
		LocalQPN:            p.LocalQPN,
		StartingPSN:         c.attrs.RQPSN,
		VendorID:            p.ECE.VendorID,
		ResponderResources:  p.ResponderResources,
		InitiatorDepth:      p.InitiatorDepth,
		TargetAckDelay:      m.cfg.CAAckDelay,
		EndToEndFlowControl: p.FlowControl,
		RNRRetryCount:       p.RNRRetryCount,
		SRQ:                 p.SRQ,
		LocalCAGUID:         m.cfg.CAGUID,
		PrivateData:         p.PrivateData,
	})
	c.reply = nil
	c.state = StateREPSent
	c.arm(now, msg, c.cmTimeout)
	m.send(out, c.peer, msg)
	return nil
}

// onRTU completes the passive side's handshake.
func (m *Manager) onRTU(now time.Time, msg mad.MAD, out *Output) {
	r := mad.RTU(msg.Data())
	c := m.conns[r.RemoteCommID()]
	if c == nil || c.sidr || c.active || r.LocalCommID() != c.remoteID {
		m.counters.UnknownConn++
		return
	}
	switch c.state {
	case StateREPSent, StateMRAREPRcvd:
		m.establish(c, clone(r.PrivateData()), out)
	default:
		// A duplicate RTU, or one overtaken by a DREQ: nothing to do.
		m.counters.Duplicates++
	}
}

// NotifyEstablished tells the manager that the passive side's QP received a
// packet from the peer before the RTU (IB_EVENT_COMM_EST, ib_cm_notify):
// the RTU was lost or is late, and the connection is up anyway.
func (m *Manager) NotifyEstablished(now time.Time, id ConnID, out *Output) error {
	c, ok := m.conns[uint32(id)]
	if !ok || c.sidr {
		return ErrUnknownConn
	}
	switch c.state {
	case StateREPSent, StateMRAREPRcvd:
		m.establish(c, nil, out)
		return nil
	case StateEstablished:
		return nil
	}
	return ErrState
}

func (m *Manager) establish(c *conn, privateData []byte, out *Output) {
	c.stop()
	c.state = StateEstablished
	out.event(Event{Type: EventEstablished, Conn: ConnID(c.id), State: c.state, ServiceID: c.serviceID, Peer: c.peer,
		Attrs: c.attrs, PrivateData: privateData})
}
