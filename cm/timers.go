package cm

import (
	"slices"
	"time"

	"github.com/gorxe/gorxe/cm/mad"
)

// Deadline returns when Tick must next run, or the zero time when no timer
// is pending. It scans the connections: a CM holds few, and they change
// state rarely, so a heap would cost more than it saves.
func (m *Manager) Deadline() time.Time {
	var d time.Time
	for _, c := range m.conns {
		if !c.deadline.IsZero() && (d.IsZero() || c.deadline.Before(d)) {
			d = c.deadline
		}
	}
	return d
}

// Tick runs the timers that are due at now: retransmissions, giving up on
// silent peers, leaving timewait. Connections are visited in ID order so
// that the output does not depend on map iteration.
func (m *Manager) Tick(now time.Time, out *Output) {
	var due []uint32
	for id, c := range m.conns {
		if !c.deadline.IsZero() && !now.Before(c.deadline) {
			due = append(due, id)
		}
	}
	slices.Sort(due)
	for _, id := range due {
		if c, ok := m.conns[id]; ok {
			m.expire(now, c, out)
		}
	}
}

// expire handles a connection whose deadline has passed.
func (m *Manager) expire(now time.Time, c *conn, out *Output) {
	if c.state == StateTimewait {
		m.remove(c)
		if !c.sidr {
			out.event(Event{Type: EventTimewaitExit, Conn: ConnID(c.id), State: StateIdle, ServiceID: c.serviceID, Peer: c.peer})
		}
		return
	}
	if c.pending == nil {
		c.deadline = time.Time{}
		return
	}
	if c.retries < c.maxRetries {
		c.retries++
		c.deadline = now.Add(c.timeout)
		m.counters.Retransmits++
		if mc := m.counters.message(c.pending); mc != nil {
			mc.Retransmits++
		}
		m.send(out, c.peer, c.pending)
		return
	}
	m.counters.Timeouts++
	c.stop()
	switch c.state {
	case StateREQSent, StateMRAREQRcvd, StateREPSent, StateMRAREPRcvd:
		// IBTA: a side that gives up on a REQ or REP tells the peer with a
		// REJ "timeout" whose ARI is its CA GUID, so that the peer's half
		// can be found even without a communication ID.
		m.counters.Rejected++
		_ = m.sendREJ(out, c, rejectedMsg(c.state), mad.RejTimeout, guidBytes(m.cfg.CAGUID), nil)
		m.remove(c)
		out.event(Event{Type: EventUnreachable, Conn: ConnID(c.id), State: StateIdle, ServiceID: c.serviceID, Peer: c.peer, Err: ErrTimeout})
	case StateDREQSent:
		m.enterTimewait(now, c)
		out.event(Event{Type: EventDisconnected, Conn: ConnID(c.id), State: c.state, ServiceID: c.serviceID, Peer: c.peer, Err: ErrTimeout})
	case StateSIDRREQSent:
		m.remove(c)
		out.event(Event{Type: EventSIDRError, Conn: ConnID(c.id), State: StateIdle, ServiceID: c.serviceID, Peer: c.peer, Err: ErrTimeout})
	}
}

// enterTimewait keeps c for one local ACK timeout so that stray packets
// of the old connection die out and duplicates are still answered, as
// ib_cm's timewait does.
func (m *Manager) enterTimewait(now time.Time, c *conn) {
	c.stop()
	c.state = StateTimewait
	c.deadline = now.Add(mad.Timeout(c.attrs.Timeout))
}
