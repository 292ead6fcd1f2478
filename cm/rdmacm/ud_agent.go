package rdmacm

import (
	"net/netip"
	"time"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// udState is the agent's part in UD "connections": the listeners of the UDP port space and the
// SIDR requests a DialUD waits on. Owned by the run loop; the maps are made on first use.
type udState struct {
	listeners map[uint64]*UDListener
	resolving map[cm.ConnID]chan cm.Event
}

// udRequest is a SIDR_REQ waiting in a UD listener's backlog.
type udRequest struct {
	id          cm.ConnID
	peerGID     [16]byte
	user        []byte
	peer, local netip.AddrPort
}

// handleSIDR handles the manager's SIDR events and reports whether e was one.
func (a *agent) handleSIDR(now time.Time, e cm.Event, out *cm.Output) bool {
	switch e.Type {
	case cm.EventSIDRREQReceived:
		a.onSIDRREQ(now, e, out)
	case cm.EventSIDRREPReceived, cm.EventSIDRError:
		if ch, ok := a.ud.resolving[e.Conn]; ok {
			delete(a.ud.resolving, e.Conn)
			ch <- e
		}
	default:
		return false
	}
	return true
}

// onSIDRREQ queues a SIDR_REQ for the UD listener of its service ID. As in the kernel, a request
// for a service ID with no UD listener (a TCP port) is answered "service ID not supported", and
// one RDMA-CM cannot take (no or a foreign CMA header, a full backlog) is refused.
//
// A full backlog refuses at once, as the kernel refuses a SIDR_REQ: its user-space RDMA-CM fails
// a connection request that finds the listener's backlog (requests not yet fetched) full with
// ENOMEM, and ib_cm answers a SIDR_REQ whose handler failed with a SIDR_REP of status 2, whatever
// the error (a REQ that failed with ENOMEM it leaves unanswered, for the peer to retransmit, and so
// does onREQ). A server whose client resolves more UD QPs at once than the backlog holds needs a
// longer one (perftest's listens with a backlog of -q).
func (a *agent) onSIDRREQ(now time.Time, e cm.Event, out *cm.Output) {
	refuse := func(s mad.SIDRStatus) { _ = a.mgr.ReplySIDR(now, e.Conn, cm.SIDRReply{Status: s}, out) }
	l := a.ud.listeners[e.ServiceID]
	if l == nil {
		refuse(mad.SIDRUnsupported)
		return
	}
	hdr, user, ok := mad.SplitCMAPrivateData(e.PrivateData)
	if !ok || !l.core.matches(hdr.Dst) {
		refuse(mad.SIDRReject)
		return
	}
	_, port, _ := mad.SplitServiceID(e.ServiceID)
	local, peer := a.requestAddrs(hdr, port)
	r := &udRequest{id: e.Conn, peerGID: e.Peer.GID, user: user, peer: peer, local: local}
	select {
	case l.core.backlog <- r:
	default:
		refuse(mad.SIDRReject)
	}
}
