package cm

import "github.com/gorxe/gorxe/cm/mad"

// QP1 is the queue pair every CM MAD is sent to, and the source QP of CM
// MADs (the GSI QP).
const QP1 = 1

// Addr is where a MAD comes from or goes to: the peer port's GID (on RoCEv2
// its IP address, IPv4-mapped for IPv4) and its CM QP, 1 unless redirected.
type Addr struct {
	GID [16]byte
	QPN uint32
}

// Datagram is one MAD to send as a UD SEND_ONLY to To (Q_Key packet.GSIQKey,
// P_Key packet.DefaultPKey, source QP 1). MAD is exactly mad.Size bytes; it may be
// shared with the manager's retransmission state, so the caller must not
// modify it.
type Datagram struct {
	To  Addr
	MAD []byte
}

// Output collects what the manager wants done. The caller sends the
// datagrams, delivers the events, then calls Reset before reusing it.
type Output struct {
	Datagrams []Datagram
	Events    []Event
}

// Reset empties o, keeping its capacity.
func (o *Output) Reset() {
	clear(o.Datagrams)
	o.Datagrams = o.Datagrams[:0]
	clear(o.Events)
	o.Events = o.Events[:0]
}

func (o *Output) send(to Addr, m mad.MAD) {
	o.Datagrams = append(o.Datagrams, Datagram{To: to, MAD: m})
}

func (o *Output) event(e Event) { o.Events = append(o.Events, e) }
