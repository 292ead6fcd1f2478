package stack

import (
	"errors"
	"net"
	"net/netip"
	"sync"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/transport"
)

// qp1 answers the CM MADs that reach the device while it has no GSI QP (QP 1), that is while no
// connection manager (cm/rdmacm's agent) runs on it. The kernel's ib_cm serves every RDMA device
// from the moment it exists, so a peer that asks a kernel device for a service nobody listens on
// is refused at once: a REQ gets a REJ "invalid service ID" (reason 8), a SIDR_REQ a SIDR_REP
// "service ID not supported" (status 1), a DREQ a DREP, a LAP an APR. Without this a gorxe device
// that runs no agent dropped such a REQ like a packet for an unknown QP, and its sender gave up
// only after every retransmission (77 to 130 s with RDMA-CM's timeouts).
//
// The answers are those of a cm.Manager with no listener, which keeps no state for them: each is
// built from the message it answers alone (TIDs, communication and request IDs, service ID
// echoed, as ib_cm's cm_issue_rej and its SIDR handler build theirs). Once an agent creates the
// GSI QP, its packets are that QP's.
type qp1 struct {
	mu  sync.Mutex // the receive goroutine and latency mode's Poll may both get MADs
	mgr *cm.Manager
	out cm.Output
	psn packet.PSN // of the next answer, as a QP's send PSN
}

// answerCM handles a packet for QP 1, which has no QP: it is counted as a packet for an unknown
// QP, which it is, and a CM MAD sent as a GSI datagram (UD SEND_ONLY with the GSI Q_Key, as the
// GSI QP would check) is answered besides.
func (r *Stack) answerCM(p *packet.Parsed, from packet.Envelope) {
	r.dev.Inc(counter.RcvdUnknownQPN)
	payload := p.Payload()
	if p.Opcode() != packet.UDSendOnly || p.DETH().QKey() != packet.GSIQKey || len(payload) < mad.Size {
		return
	}
	peer := cm.Addr{GID: from.Src.Addr().As16(), QPN: p.DETH().SrcQP()}
	local := from.Dst.Addr().Unmap()
	q := &r.qp1
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.mgr == nil {
		q.mgr = cm.New(cm.Config{})
	}
	q.mgr.Receive(r.clk.Now(), peer, payload[:mad.Size], &q.out)
	for _, d := range q.out.Datagrams {
		r.sendMAD(local, d.To, d.MAD)
	}
	q.out.Reset()
}

// sendMAD sends one MAD from QP 1 at local to the QP to.QPN of the peer to.GID, built as the GSI
// QP's requester builds its datagrams (UD SEND_ONLY, AckReq set as kernel rxe sets it on QP 1,
// the UDP source port of QP 1, the hop limit RDMA-CM gives its paths).
func (r *Stack) sendMAD(local netip.Addr, to cm.Addr, m mad.MAD) {
	var h packet.Headers
	h.BTH = packet.BTHFields{Opcode: packet.UDSendOnly, PKey: packet.DefaultPKey, DestQP: to.QPN, PSN: r.qp1.psn, AckReq: true}
	h.DETH = packet.DETHFields{QKey: packet.GSIQKey, SrcQP: cm.QP1}
	r.qp1.psn = r.qp1.psn.Add(1)
	pkt, err := packet.AppendPacket(make([]byte, 0, packet.PacketLen(packet.UDSendOnly, len(m))), &h, m)
	if err != nil {
		return
	}
	port := r.env.DstPort
	if port == 0 {
		port = packet.UDPPort // as transport.Env reads a zero DstPort
	}
	env := packet.Envelope{
		Src:      netip.AddrPortFrom(local, packet.DefaultUDPSourcePort(cm.QP1)),
		Dst:      netip.AddrPortFrom(netip.AddrFrom16(to.GID).Unmap(), port),
		HopLimit: cm.DefaultHopLimit,
	}
	if local.Is4() {
		env.IPFlags = packet.IPv4DontFragment
	}
	if env.PutICRC(pkt) != nil {
		return
	}
	_, err = r.conn.Send([]netio.Message{outgoing(&transport.Packet{Buf: pkt, Env: env})})
	if err != nil && !errors.Is(err, net.ErrClosed) {
		r.dev.Inc(counter.SendErr)
	}
}
