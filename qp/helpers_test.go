package qp

import (
	"net/netip"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
)

// recorder is an EventSink that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) HandleEvent(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) types() []EventType {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ts []EventType
	for _, e := range r.events {
		ts = append(ts, e.Type)
	}
	return ts
}

type env struct {
	t      *testing.T
	table  *Table
	mrs    *mr.Table
	pd     *mr.PD
	events *recorder
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, events: &recorder{}, mrs: mr.NewTable()}
	e.table = NewTable(Config{Limits: DefaultLimits(), Events: e.events})
	pd, err := e.mrs.AllocPD()
	require.NoError(t, err)
	e.pd = pd
	return e
}

func (e *env) cq(n int) *cq.CQ {
	e.t.Helper()
	c, err := cq.New(n, cq.Options{})
	require.NoError(e.t, err)
	return c
}

func defaultCaps() Caps {
	return Caps{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 4, MaxRecvSGE: 4, MaxInlineData: 64}
}

// qp creates a QP of type typ with its own send and receive CQs of 64 entries.
func (e *env) qp(typ Type, caps Caps) *QP {
	e.t.Helper()
	q, err := e.table.CreateQP(e.pd, &InitAttr{Type: typ, SendCQ: e.cq(64), RecvCQ: e.cq(64), Cap: caps})
	require.NoError(e.t, err)
	return q
}

func testAV() AddressVector {
	return AddressVector{
		IsGlobal: true, PortNum: 1,
		GRH: GlobalRoute{DGID: netip.MustParseAddr("::ffff:10.0.0.2").As16(), HopLimit: 64, SGIDIndex: 1},
	}
}

// fullAttr has valid values for every attribute.
func fullAttr() Attr {
	return Attr{
		PathMTU: MTU1024, QKey: 0x11111111, RQPSN: 0x123, SQPSN: 0x456, DestQPNum: 0x77,
		AccessFlags: mr.AccessRemoteWrite | mr.AccessRemoteRead, AHAttr: testAV(), PortNum: 1,
		MaxRdAtomic: 3, MaxDestRdAtomic: 5, MinRNRTimer: 12, Timeout: 14, RetryCnt: 7, RNRRetry: 7,
	}
}

// to drives q through the usual path to state s with exactly the required attributes.
func (e *env) to(q *QP, s State) {
	e.t.Helper()
	path := []State{StateInit, StateRTR, StateRTS}
	for _, st := range path {
		if q.State() >= s && s <= StateRTS {
			return
		}
		a := fullAttr()
		a.State = st
		mask := AttrState | transitions[q.State()][st].req[q.typ]
		require.NoError(e.t, q.Modify(&a, mask), "%v -> %v", q.State(), st)
		if st == s {
			return
		}
	}
	a := Attr{State: s}
	require.NoError(e.t, q.Modify(&a, AttrState), "-> %v", s)
}

func poll(c *cq.CQ) []cq.WC {
	out := make([]cq.WC, 128)
	return out[:c.Poll(out)]
}

// postSend posts wrs and returns PostSend's error; the tests that care whether the QP was idle
// read PostSend's first result themselves.
func postSend(q *QP, wrs []SendWR) error {
	_, err := q.PostSend(wrs)
	return err
}
