package transport

import (
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// snapshot is the engine's one copy of its QP's attributes, shared by the requester, the
// completer and the responder. Checking it costs an atomic load (qp.AttrVersion), inline in the
// callers; it is re-read, with one Query and one route resolution, only when Modify or the engine
// itself moved the version.
type snapshot struct {
	version uint64 // qp.AttrVersion when attr was read; unread, a value the version never takes
	resets  uint64 // qp.ResetCount when attr was read: a change is a new connection
	// gen counts the re-reads that found attr or resets changed; each half of the engine
	// re-derives its own state when gen moves past the one it last saw.
	gen    uint64
	attr   qp.Attr
	path   packet.Envelope // RC and UC: where packets go, from the QP's own source port
	pathOK bool            // the QP has a path: its address vector was set (qp.Modify checked it resolves)
}

// unread is the snapshot's version before the first read: qp.AttrVersion counts up from zero and
// never gets there.
const unread = ^uint64(0)

// attrs returns the QP's attributes, re-read if they changed. A positive ACK the responder put
// off until the end of a burst is sent first, under the attributes it was owed under: its
// messages completed before the change, and rxe, which acknowledges at once, would have sent it
// already. Without it a peer whose SEND was received just before the QP was moved to ERR (a
// disconnection right after a receive) sees that SEND flushed rather than acknowledged.
func (e *Engine) attrs(out *Output) *snapshot {
	s := &e.at
	v := e.q.AttrVersion()
	if v == s.version {
		return s
	}
	e.resp.flushAck(out)
	// Read before Query, like the version: a RESET this engine never saw (the whole RESET->RTS
	// walk happened between two calls) may bring back identical attributes.
	resets := e.q.ResetCount()
	attr, _ := e.q.Query()
	s.version = v
	if s.gen != 0 && attr == s.attr && resets == s.resets {
		return s
	}
	s.attr, s.resets = attr, resets
	s.gen++
	if t := e.q.Type(); t == qp.TypeRC || t == qp.TypeUC {
		sport := packet.UDPSourcePort(attr.AHAttr.GRH.FlowLabel, e.q.QPN(), attr.DestQPNum)
		s.path, s.pathOK = e.dev.Route(&attr.AHAttr)
		s.path = withSourcePort(s.path, sport)
	}
	return s
}
