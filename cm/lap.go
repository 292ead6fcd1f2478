package cm

import (
	"time"

	"github.com/gorxe/gorxe/cm/mad"
)

// onLAP answers a request to load an alternate path. RoCE has no automatic
// path migration (the kernel's CM refuses LAP on RoCE ports), so the answer
// is an APR: "unsupported" for a connection we know, "invalid communication
// ID" otherwise. Answering, rather than dropping as the kernel does, stops
// the peer's retransmissions at once.
func (m *Manager) onLAP(now time.Time, from Addr, msg mad.MAD, out *Output) {
	r := mad.LAP(msg.Data())
	status := mad.APRUnsupported
	c := m.conns[r.RemoteCommID()]
	if c == nil || c.sidr || r.LocalCommID() != c.remoteID {
		m.counters.UnknownConn++
		status = mad.APRInvalidCommID
	} else if c.state != StateEstablished {
		m.counters.Unexpected++
		status = mad.APRInvalidCommID
	}
	reply := mad.New(mad.AttrAPR, msg.Header().TID())
	_ = mad.APR(reply.Data()).Encode(&mad.APRFields{LocalCommID: r.RemoteCommID(), RemoteCommID: r.LocalCommID(), Status: status})
	m.send(out, from, reply)
}

// onAPR drops an alternate path response: this manager never sends a LAP.
func (m *Manager) onAPR(mad.MAD) { m.counters.Unexpected++ }
