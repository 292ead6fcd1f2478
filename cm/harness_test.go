package cm

import (
	"encoding/binary"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
)

// seq returns a Rand that yields vals in order, then counts up from
// 0x1000: tests pin communication IDs and PSNs this way.
func seq(vals ...uint32) func() uint32 {
	next := uint32(0x1000)
	return func() uint32 {
		if len(vals) > 0 {
			v := vals[0]
			vals = vals[1:]
			return v
		}
		next++
		return next
	}
}

var (
	gidA = [16]byte{10: 0xff, 11: 0xff, 12: 10, 13: 99, 14: 0, 15: 3}
	gidB = [16]byte{10: 0xff, 11: 0xff, 12: 10, 13: 99, 14: 0, 15: 2}
	t0   = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

const (
	guidA    = 0x505400fffe000003
	guidB    = 0x505400fffe000002
	rpingSID = 0x0000000001061c06 // mad.ServiceID(mad.PortSpaceTCP, 7174)
	qpnA     = 0x29
	qpnB     = 0x2a
	sideA    = 0
	sideB    = 1
)

// wire runs two managers against each other through a lossy, in-order
// network on a fake clock. Side 0 is A (active), side 1 is B (passive).
type wire struct {
	t      *testing.T
	now    time.Time
	m      [2]*Manager
	addr   [2]Addr
	events [2][]Event
	sent   [2][]mad.MAD
	// drop decides whether a datagram from side "from" is lost.
	drop func(from int, msg mad.MAD) bool
	// down cuts a side off: it neither sends nor receives.
	down [2]bool
}

func newWire(t *testing.T, cfgA, cfgB Config) *wire {
	if cfgA.CAGUID == 0 {
		cfgA.CAGUID = guidA
	}
	if cfgB.CAGUID == 0 {
		cfgB.CAGUID = guidB
	}
	w := &wire{
		t:    t,
		now:  t0,
		m:    [2]*Manager{New(cfgA), New(cfgB)},
		addr: [2]Addr{{GID: gidA, QPN: QP1}, {GID: gidB, QPN: QP1}},
	}
	require.NoError(t, w.m[sideB].Listen(rpingSID))
	return w
}

// flush delivers what side "from" produced, and everything that causes,
// until the network is quiet.
func (w *wire) flush(from int, out *Output) {
	w.t.Helper()
	w.events[from] = append(w.events[from], out.Events...)
	to := 1 - from
	for _, d := range out.Datagrams {
		require.Len(w.t, d.MAD, mad.Size)
		require.Equal(w.t, w.addr[to], d.To, "a MAD from side %d goes to the other side's QP1", from)
		w.sent[from] = append(w.sent[from], d.MAD)
		if w.down[from] || w.down[to] || (w.drop != nil && w.drop(from, d.MAD)) {
			continue
		}
		var next Output
		w.m[to].Receive(w.now, w.addr[from], d.MAD, &next)
		w.flush(to, &next)
	}
}

// do runs one command on a side and delivers its output.
func (w *wire) do(side int, f func(m *Manager, out *Output) error) {
	w.t.Helper()
	var out Output
	require.NoError(w.t, f(w.m[side], &out))
	w.flush(side, &out)
}

// advance moves the clock to the earliest deadline of either side and runs
// both timers; it reports false when no timer is pending.
func (w *wire) advance() bool {
	w.t.Helper()
	next := time.Time{}
	for _, m := range w.m {
		if d := m.Deadline(); !d.IsZero() && (next.IsZero() || d.Before(next)) {
			next = d
		}
	}
	if next.IsZero() {
		return false
	}
	require.False(w.t, next.Before(w.now), "deadlines never lie in the past")
	w.now = next
	for side, m := range w.m {
		var out Output
		m.Tick(w.now, &out)
		w.flush(side, &out)
	}
	return true
}

// settle runs timers until none is pending (bounded, to catch livelock).
func (w *wire) settle() {
	w.t.Helper()
	for i := 0; w.advance(); i++ {
		require.Less(w.t, i, 1000, "timers never settle")
	}
}

// take returns and forgets the events side has seen.
func (w *wire) take(side int) []Event {
	e := w.events[side]
	w.events[side] = nil
	return e
}

// types lists the event types of evs.
func types(evs []Event) []EventType {
	var ts []EventType
	for _, e := range evs {
		ts = append(ts, e.Type)
	}
	return ts
}

// attrsOf returns the attribute IDs of msgs.
func attrsOf(msgs []mad.MAD) []mad.AttrID {
	var as []mad.AttrID
	for _, m := range msgs {
		as = append(as, m.Header().AttrID())
	}
	return as
}

// rpingParams connects as rping does: RC, one outstanding read each way,
// retry counts 7, the CMA header in the private data.
func rpingParams(t *testing.T) ConnectParams {
	pd, err := mad.AppendCMAPrivateData(nil, &mad.CMAHeaderFields{
		SrcPort: 36338,
		Src:     addrOf(gidA),
		Dst:     addrOf(gidB),
	}, nil)
	require.NoError(t, err)
	return ConnectParams{
		ServiceID: rpingSID,
		Path:      Path{LocalGID: gidA, RemoteGID: gidB, FlowLabel: 0x14c54, HopLimit: 64, MTU: mad.MTU1024},
		Transport: mad.TransportRC, LocalQPN: qpnA,
		ResponderResources: 1, InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7,
		PrivateData: pd,
	}
}

func rpingAccept() AcceptParams {
	return AcceptParams{LocalQPN: qpnB, ResponderResources: 1, InitiatorDepth: 1, RNRRetryCount: 7}
}

// connect runs a whole handshake and returns both connection IDs.
func (w *wire) connect() (a, b ConnID) {
	w.t.Helper()
	w.do(sideA, func(m *Manager, out *Output) (err error) {
		a, err = m.Connect(w.now, rpingParams(w.t), out)
		return err
	})
	evs := w.take(sideB)
	require.Equal(w.t, []EventType{EventREQReceived}, types(evs))
	b = evs[0].Conn
	w.do(sideB, func(m *Manager, out *Output) error { return m.Accept(w.now, b, rpingAccept(), out) })
	require.Equal(w.t, []EventType{EventREPReceived}, types(w.take(sideA)))
	w.do(sideA, func(m *Manager, out *Output) error { return m.SendRTU(w.now, a, nil, out) })
	require.Equal(w.t, []EventType{EventEstablished}, types(w.take(sideA)))
	require.Equal(w.t, []EventType{EventEstablished}, types(w.take(sideB)))
	return a, b
}

func (w *wire) state(side int, id ConnID) State {
	ci, ok := w.m[side].Conn(id)
	if !ok {
		return StateIdle
	}
	return ci.State
}

// The bundled capture (see cm/mad's capture test): frames 2411–2413 and
// 2534–2535 are rping's REQ, REP, RTU, DREQ and DREP between two kernel
// 6.1 rxe hosts.
const capturePath = "../packet/testdata/kernel-rxe-rc-uc-ud.pcapng"

func captureMAD(t *testing.T, frame int) []byte {
	t.Helper()
	const off = 14 + 20 + 8 + 12 + 8 // Ethernet, IPv4, UDP, BTH, DETH
	return captureFrame(t, frame)[off : off+mad.Size]
}

// capturePSN is the BTH PSN of an IPv4 frame of the capture.
func capturePSN(t *testing.T, frame int) uint32 {
	t.Helper()
	const bth = 14 + 20 + 8 // Ethernet, IPv4, UDP
	pkt := captureFrame(t, frame)
	return binary.BigEndian.Uint32(pkt[bth+8:]) & mad.QPNMask
}

// captureFrame is frame number frame (counted from 1) of the capture.
func captureFrame(t *testing.T, frame int) []byte {
	t.Helper()
	data, err := os.ReadFile(capturePath)
	require.NoError(t, err)
	for n := 0; len(data) >= 12; {
		size := int(binary.LittleEndian.Uint32(data[4:]))
		require.GreaterOrEqual(t, size, 12)
		require.LessOrEqual(t, size, len(data))
		if binary.LittleEndian.Uint32(data) == 6 {
			if n++; n == frame {
				return data[28 : 28+int(binary.LittleEndian.Uint32(data[20:]))]
			}
		}
		data = data[size:]
	}
	require.Failf(t, "frame not in the capture", "frame %d", frame)
	return nil
}

func addrOf(gid [16]byte) netip.Addr { return netip.AddrFrom16(gid).Unmap() }
