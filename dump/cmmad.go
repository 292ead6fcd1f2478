package dump

import (
	"fmt"

	"github.com/gorxe/gorxe/cm/mad"
)

// gsiQP is the destination of connection manager MADs (QP1).
const gsiQP = 1

// cm returns the connection manager MAD p carries to QP1, and false if it carries none.
func (p *Packet) cm() (mad.MAD, bool) {
	if p.BTH.DestQP != gsiQP {
		return nil, false
	}
	m, err := mad.Parse(p.Payload)
	return m, err == nil
}

// cmMessage returns the connection manager message p carries (its attribute ID), and false if
// it carries none.
func (p *Packet) cmMessage() (mad.AttrID, bool) {
	m, ok := p.cm()
	if !ok {
		return 0, false
	}
	return m.Header().AttrID(), true
}

// cmSummary returns, for a packet to QP1 carrying a connection manager MAD, the message and the
// fields that identify its connection: " cm=REQ tid=... lcid=... sid=... qpn=... spsn=...". A
// RoCE capture of rping or any RDMA-CM program starts with these, and the IDs tie the handshake,
// its retransmissions and the teardown together; the QPNs and starting PSNs (spsn) of the REQ
// and REP tie it to the RC traffic that follows. Anything else gives "".
func (p *Packet) cmSummary() string {
	m, ok := p.cm()
	if !ok {
		return ""
	}
	h := m.Header()
	s := fmt.Sprintf(" cm=%v tid=0x%016x", h.AttrID(), h.TID())
	ids := func(local, remote uint32) string { return fmt.Sprintf(" lcid=0x%08x rcid=0x%08x", local, remote) }
	switch d := m.Data(); h.AttrID() {
	case mad.AttrREQ:
		r := mad.REQ(d)
		s += fmt.Sprintf(" lcid=0x%08x sid=0x%016x qpn=0x%06x spsn=0x%06x", r.LocalCommID(), r.ServiceID(), r.LocalQPN(), r.StartingPSN())
	case mad.AttrREP:
		r := mad.REP(d)
		s += ids(r.LocalCommID(), r.RemoteCommID()) + fmt.Sprintf(" qpn=0x%06x spsn=0x%06x", r.LocalQPN(), r.StartingPSN())
	case mad.AttrREJ:
		r := mad.REJ(d)
		s += ids(r.LocalCommID(), r.RemoteCommID()) + fmt.Sprintf(" reason=%d", r.Reason())
	case mad.AttrMRA:
		r := mad.MRA(d)
		s += ids(r.LocalCommID(), r.RemoteCommID())
	case mad.AttrRTU:
		r := mad.RTU(d)
		s += ids(r.LocalCommID(), r.RemoteCommID())
	case mad.AttrDREQ:
		r := mad.DREQ(d)
		s += ids(r.LocalCommID(), r.RemoteCommID())
	case mad.AttrDREP:
		r := mad.DREP(d)
		s += ids(r.LocalCommID(), r.RemoteCommID())
	case mad.AttrLAP:
		r := mad.LAP(d)
		s += ids(r.LocalCommID(), r.RemoteCommID())
	case mad.AttrAPR:
		r := mad.APR(d)
		s += ids(r.LocalCommID(), r.RemoteCommID()) + fmt.Sprintf(" status=%d", r.Status())
	case mad.AttrSIDRREQ:
		r := mad.SIDRREQ(d)
		s += fmt.Sprintf(" reqid=0x%08x sid=0x%016x", r.RequestID(), r.ServiceID())
	case mad.AttrSIDRREP:
		r := mad.SIDRREP(d)
		s += fmt.Sprintf(" reqid=0x%08x status=%d qpn=0x%06x", r.RequestID(), r.Status(), r.QPN())
	}
	return s
}
