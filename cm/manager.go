package cm

import (
	"math/bits"
	"time"

	"github.com/gorxe/gorxe/cm/mad"
)

// Manager is the communication manager of one port: its connections, SIDR
// requests and listeners. It is not safe for concurrent use; the caller
// serialises calls, as it does for a transport engine.
type Manager struct {
	cfg       Config
	conns     map[uint32]*conn
	byRemote  map[remoteKey]*conn
	byQPN     map[qpKey]*conn
	bySIDR    map[sidrKey]*conn
	listeners map[uint64]struct{}
	idBase    uint32
	idNext    uint32
	counters  Counters
}

// New returns a manager with no connections and no listeners.
func New(cfg Config) *Manager {
	cfg.setDefaults()
	return &Manager{
		cfg:       cfg,
		conns:     make(map[uint32]*conn),
		byRemote:  make(map[remoteKey]*conn),
		byQPN:     make(map[qpKey]*conn),
		bySIDR:    make(map[sidrKey]*conn),
		listeners: make(map[uint64]struct{}),
		// Communication IDs start at a random point, as ib_cm's do, so a
		// restarted manager does not reuse the IDs its peers still remember.
		idBase: cfg.Rand(),
	}
}

// Counters returns a copy of the manager's counters.
func (m *Manager) Counters() Counters { return m.counters }

// Conn returns a snapshot of a connection.
func (m *Manager) Conn(id ConnID) (ConnInfo, bool) {
	c, ok := m.conns[uint32(id)]
	if !ok {
		return ConnInfo{}, false
	}
	return c.info(), true
}

// Len returns the number of connections and SIDR requests the manager holds,
// timewait included.
func (m *Manager) Len() int { return len(m.conns) }

// Listen makes REQs and SIDR_REQs for serviceID match a listener (RDMA-CM
// service IDs come from mad.ServiceID).
func (m *Manager) Listen(serviceID uint64) error {
	if _, ok := m.listeners[serviceID]; ok {
		return ErrServiceIDInUse
	}
	m.listeners[serviceID] = struct{}{}
	return nil
}

// Unlisten removes the listener for serviceID. Connections it accepted are
// not affected.
func (m *Manager) Unlisten(serviceID uint64) error {
	if _, ok := m.listeners[serviceID]; !ok {
		return ErrNoListener
	}
	delete(m.listeners, serviceID)
	return nil
}

// Receive handles one MAD that arrived on QP1 from "from". Input that is
// not a CM MAD, or that no connection's state accepts, is counted and
// dropped or answered as IBTA says; it never panics.
func (m *Manager) Receive(now time.Time, from Addr, b []byte, out *Output) {
	m.counters.Received++
	msg, err := mad.Parse(b)
	if err != nil {
		m.counters.Malformed++
		return
	}
	m.counters.message(msg).Received++
	switch msg.Header().AttrID() {
	case mad.AttrREQ:
		m.onREQ(now, from, msg, out)
	case mad.AttrMRA:
		m.onMRA(now, msg, out)
	case mad.AttrREJ:
		m.onREJ(now, msg, out)
	case mad.AttrREP:
		m.onREP(now, from, msg, out)
	case mad.AttrRTU:
		m.onRTU(now, msg, out)
	case mad.AttrDREQ:
		m.onDREQ(now, from, msg, out)
	case mad.AttrDREP:
		m.onDREP(now, msg, out)
	case mad.AttrSIDRREQ:
		m.onSIDRREQ(now, from, msg, out)
	case mad.AttrSIDRREP:
		m.onSIDRREP(now, msg, out)
	case mad.AttrLAP:
		m.onLAP(now, from, msg, out)
	case mad.AttrAPR:
		m.onAPR(msg)
	}
}

// newConn allocates a connection with a fresh local communication ID.
func (m *Manager) newConn() (*conn, error) {
	if len(m.conns) >= m.cfg.MaxConns {
		return nil, ErrTooManyConns
	}
	for {
		m.idNext++
		id := m.idBase ^ m.idNext
		if _, used := m.conns[id]; id == 0 || used {
			continue
		}
		// The low half of the TID is the local ID with its bytes swapped:
		// Linux stores the ID big-endian and reads it as a number on a
		// little-endian host, and doing the same makes gorxe's MADs
		// byte-identical to an x86 kernel's. Peers treat TIDs as opaque.
		c := &conn{id: id, tid: uint64(m.cfg.TIDHigh)<<32 | uint64(bits.ReverseBytes32(id))}
		m.conns[id] = c
		return c, nil
	}
}

// register records the peer's identity of c for duplicate and stale
// connection detection.
func (m *Manager) register(c *conn) {
	c.registered = true
	if c.sidr {
		m.bySIDR[sidrKey{c.remoteID, c.peer.GID}] = c
		return
	}
	m.byRemote[remoteKey{c.remoteID, c.remoteGUID}] = c
	m.byQPN[qpKey{c.attrs.RemoteQPN, c.remoteGUID}] = c
}

// remove forgets c entirely.
func (m *Manager) remove(c *conn) {
	c.stop()
	delete(m.conns, c.id)
	if c.registered && c.sidr {
		delete(m.bySIDR, sidrKey{c.remoteID, c.peer.GID})
	} else if c.registered {
		if m.byRemote[remoteKey{c.remoteID, c.remoteGUID}] == c {
			delete(m.byRemote, remoteKey{c.remoteID, c.remoteGUID})
		}
		if m.byQPN[qpKey{c.attrs.RemoteQPN, c.remoteGUID}] == c {
			delete(m.byQPN, qpKey{c.attrs.RemoteQPN, c.remoteGUID})
		}
		c.registered = false
	}
	c.state = StateIdle
}

// send queues m for to.
func (m *Manager) send(out *Output, to Addr, msg mad.MAD) {
	m.counters.Sent++
	if c := m.counters.message(msg); c != nil {
		c.Sent++
	}
	out.send(to, msg)
}

func guidBytes(g uint64) []byte {
	b := make([]byte, 8)
	for i := range 8 {
		b[i] = byte(g >> (56 - 8*i))
	}
	return b
}

// clone copies private data out of a received MAD for an event.
func clone(b []byte) []byte { return append([]byte(nil), b...) }
