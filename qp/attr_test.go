package qp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
)

func TestAttrRanges(t *testing.T) {
	type tc struct {
		name  string
		from  State
		to    State
		mask  AttrMask
		edit  func(*Attr)
		field string // "" means accepted
	}
	rtr := AttrAV | AttrPathMTU | AttrDestQPN | AttrRQPSN | AttrMaxDestRdAtomic | AttrMinRNRTimer
	rts := AttrTimeout | AttrRetryCnt | AttrRNRRetry | AttrSQPSN | AttrMaxQPRdAtomic
	init := AttrPKeyIndex | AttrPort | AttrAccessFlags
	cases := []tc{
		{"timeout 31", StateRTR, StateRTS, rts, func(a *Attr) { a.Timeout = 31 }, ""},
		{"timeout 32", StateRTR, StateRTS, rts, func(a *Attr) { a.Timeout = 32 }, "timeout"},
		{"retry 8", StateRTR, StateRTS, rts, func(a *Attr) { a.RetryCnt = 8 }, "retry_cnt"},
		{"rnr retry 8", StateRTR, StateRTS, rts, func(a *Attr) { a.RNRRetry = 8 }, "rnr_retry"},
		{"rd atomic 128", StateRTR, StateRTS, rts, func(a *Attr) { a.MaxRdAtomic = 128 }, ""},
		{"rd atomic 129", StateRTR, StateRTS, rts, func(a *Attr) { a.MaxRdAtomic = 129 }, "max_rd_atomic"},
		{"dest rd atomic 129", StateInit, StateRTR, rtr, func(a *Attr) { a.MaxDestRdAtomic = 129 }, "max_dest_rd_atomic"},
		{"min rnr 32", StateInit, StateRTR, rtr, func(a *Attr) { a.MinRNRTimer = 32 }, "min_rnr_timer"},
		{"mtu 4096", StateInit, StateRTR, rtr, func(a *Attr) { a.PathMTU = MTU4096 }, ""},
		{"mtu 0", StateInit, StateRTR, rtr, func(a *Attr) { a.PathMTU = 0 }, "path_mtu"},
		{"mtu 6", StateInit, StateRTR, rtr, func(a *Attr) { a.PathMTU = 6 }, "path_mtu"},
		{"dest qpn 2^24", StateInit, StateRTR, rtr, func(a *Attr) { a.DestQPNum = 1 << 24 }, "dest_qp_num"},
		{"no grh", StateInit, StateRTR, rtr, func(a *Attr) { a.AHAttr.IsGlobal = false }, "ah_attr.is_global"},
		{"sgid index", StateInit, StateRTR, rtr, func(a *Attr) { a.AHAttr.GRH.SGIDIndex = 255 }, ""},
		{"zero dgid", StateInit, StateRTR, rtr, func(a *Attr) { a.AHAttr.GRH.DGID = [16]byte{} }, "ah_attr.grh.dgid"},
		{"flow label", StateInit, StateRTR, rtr, func(a *Attr) { a.AHAttr.GRH.FlowLabel = 1 << 20 }, "ah_attr.grh.flow_label"},
		{"av port 2", StateInit, StateRTR, rtr, func(a *Attr) { a.AHAttr.PortNum = 2 }, "ah_attr.port_num"},
		{"sl 16", StateInit, StateRTR, rtr, func(a *Attr) { a.AHAttr.SL = 16 }, "ah_attr.sl"},
		{"pkey index 63", StateReset, StateInit, init, func(a *Attr) { a.PKeyIndex = 63 }, ""},
		{"pkey index 64", StateReset, StateInit, init, func(a *Attr) { a.PKeyIndex = 64 }, "pkey_index"},
		{"port 0", StateReset, StateInit, init, func(a *Attr) { a.PortNum = 0 }, "port_num"},
		{"port 2", StateReset, StateInit, init, func(a *Attr) { a.PortNum = 2 }, "port_num"},
		{"access mw bind", StateReset, StateInit, init, func(a *Attr) { a.AccessFlags = mr.AccessMWBind }, "qp_access_flags"},
		{"access all remote", StateReset, StateInit, init, func(a *Attr) {
			a.AccessFlags = mr.AccessRemoteAtomic | mr.AccessRemoteRead | mr.AccessRemoteWrite | mr.AccessFlushGlobal
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			q := placeIn(e, TypeRC, c.from)
			a := fullAttr()
			a.State = c.to
			c.edit(&a)
			before, _ := q.Query()
			err := q.Modify(&a, AttrState|c.mask)
			if c.field == "" {
				require.NoError(t, err)
				return
			}
			var ae *AttrError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, c.field, ae.Name, "rejected attribute")
			require.ErrorIs(t, err, ErrInvalidAttr)
			switch c.field {
			case "port_num", "ah_attr.port_num":
				require.ErrorIs(t, err, ErrInvalidPort)
			case "pkey_index":
				require.ErrorIs(t, err, ErrInvalidPKeyIndex)
			default:
				require.NotErrorIs(t, err, ErrInvalidPort)
			}
			after, _ := q.Query()
			require.Equal(t, before, after, "rejected modify changed attributes")
		})
	}
}

func TestPortMTULimit(t *testing.T) {
	e := newEnv(t)
	l := DefaultLimits()
	l.MaxMTU = MTU1024
	e.table = NewTable(Config{Limits: l})
	q := e.qp(TypeRC, defaultCaps())
	e.to(q, StateInit)
	a := fullAttr()
	a.State, a.PathMTU = StateRTR, MTU2048
	var ae *AttrError
	err := q.Modify(&a, AttrState|transitions[StateInit][StateRTR].req[TypeRC])
	require.ErrorAs(t, err, &ae, "MTU above port max")
	require.Equal(t, "path_mtu", ae.Name, "MTU above port max")
}

// TestModifyChecksRoute: a path whose address vector does not resolve (Config.Route) is refused
// with the GID index's error and changes nothing; one that resolves is applied, and a Modify that
// does not set the path does not resolve it.
func TestModifyChecksRoute(t *testing.T) {
	e := newEnv(t)
	resolves, calls := false, 0
	e.table = NewTable(Config{Limits: DefaultLimits(), Route: func(*AddressVector) (packet.Envelope, bool) {
		calls++
		return packet.Envelope{}, resolves
	}})
	q := e.qp(TypeRC, defaultCaps())
	e.to(q, StateInit)
	assert.Zero(t, calls, "RESET->INIT sets no path")
	a := fullAttr()
	a.State = StateRTR
	mask := AttrState | transitions[StateInit][StateRTR].req[TypeRC]
	err := q.Modify(&a, mask)
	var ae *AttrError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, &AttrError{Name: "ah_attr.grh.sgid_index", Value: 1, Limit: "a local address of the destination's family",
		Err: ErrInvalidGIDIndex}, ae)
	assert.ErrorIs(t, err, ErrInvalidAttr)
	assert.Equal(t, StateInit, q.State(), "a refused path changed the state")
	got, _ := q.Query()
	assert.Equal(t, AddressVector{}, got.AHAttr, "a refused path was applied")

	resolves = true
	require.NoError(t, q.Modify(&a, mask))
	got, _ = q.Query()
	assert.Equal(t, a.AHAttr, got.AHAttr)
	assert.Equal(t, 2, calls)
}

func TestAppliedValues(t *testing.T) {
	e := newEnv(t)
	q := placeIn(e, TypeRC, StateInit)
	a := fullAttr()
	a.State, a.RQPSN, a.MaxDestRdAtomic = StateRTR, 0xABCDEF12, 5
	require.NoError(t, q.Modify(&a, AttrState|transitions[StateInit][StateRTR].req[TypeRC]))
	a = fullAttr()
	a.State, a.SQPSN, a.MaxRdAtomic = StateRTS, 0xFF000001, 3
	require.NoError(t, q.Modify(&a, AttrState|transitions[StateRTR][StateRTS].req[TypeRC]))
	got, init := q.Query()
	assert.Equal(t, uint32(0xCDEF12), got.RQPSN, "rq_psn masked to 24 bits")
	assert.Equal(t, uint32(1), got.SQPSN, "sq_psn masked to 24 bits")
	assert.Equal(t, uint8(8), got.MaxDestRdAtomic, "max_dest_rd_atomic rounded up")
	assert.Equal(t, uint8(4), got.MaxRdAtomic, "max_rd_atomic rounded up")
	assert.Equal(t, StateRTS, got.State, "qp_state")
	assert.Equal(t, StateRTS, got.CurState, "cur_qp_state")
	assert.Equal(t, MTU1024, got.PathMTU, "path_mtu")
	assert.Equal(t, uint32(0x77), got.DestQPNum, "dest_qp_num")
	assert.Equal(t, testAV(), got.AHAttr, "ah_attr")
	assert.Equal(t, uint8(14), got.Timeout, "timeout")
	assert.Equal(t, uint8(7), got.RetryCnt, "retry_cnt")
	assert.Equal(t, uint8(12), got.MinRNRTimer, "min_rnr_timer")
	assert.Equal(t, TypeRC, init.Type, "init attributes: type")
	assert.Equal(t, defaultCaps(), init.Cap, "init attributes: cap")
	assert.Equal(t, defaultCaps(), got.Cap, "cap")
	for in, want := range map[uint8]uint8{0: 0, 1: 1, 2: 2, 3: 4, 5: 8, 64: 64, 65: 128, 128: 128} {
		assert.Equal(t, want, roundPow2(in), "roundPow2(%d)", in)
	}
}

func TestMTUHelpers(t *testing.T) {
	for m, b := range map[MTU]int{MTU256: 256, MTU512: 512, MTU1024: 1024, MTU2048: 2048, MTU4096: 4096, 0: 0, 6: 0} {
		assert.Equal(t, b, m.Bytes(), "MTU(%d).Bytes()", uint8(m))
	}
	for n, want := range map[int]MTU{256: MTU256, 1500 - 28 - 16: MTU1024, 4096: MTU4096, 9000: MTU4096} {
		got, ok := MTUFromBytes(n)
		assert.True(t, ok, "MTUFromBytes(%d) ok", n)
		assert.Equal(t, want, got, "MTUFromBytes(%d)", n)
	}
	_, ok := MTUFromBytes(255)
	assert.False(t, ok, "MTUFromBytes(255) ok")
	assert.Equal(t, "1024", MTU1024.String())
	assert.Equal(t, "RTS", StateRTS.String())
	assert.Equal(t, "UD", TypeUD.String())
	assert.Equal(t, "STATE|QKEY|0x40000000", (AttrState | AttrQKey | 1<<30).String(), "AttrMask.String")
}

func TestEnumValues(t *testing.T) {
	for typ, v := range map[Type]uint8{TypeRC: 2, TypeUC: 3, TypeUD: 4, TypeGSI: 1} {
		assert.Equal(t, v, uint8(typ), "QP type %v value", typ)
	}
	for s, v := range map[State]uint8{StateReset: 0, StateInit: 1, StateRTR: 2, StateRTS: 3, StateSQD: 4, StateSQE: 5, StateErr: 6} {
		assert.Equal(t, v, uint8(s), "QP state %v value", s)
	}
	for m, v := range map[AttrMask]uint32{AttrDestQPN: 1 << 20, AttrCap: 1 << 19, AttrSQPSN: 1 << 16, AttrAV: 1 << 7, AttrRateLimit: 1 << 25} {
		assert.Equal(t, v, uint32(m), "attr mask %v value", m)
	}
	ops := map[WROpcode]uint8{WRRDMAWrite: 0, WRRDMAWriteWithImm: 1, WRSend: 2, WRSendWithImm: 3, WRRDMARead: 4,
		WRAtomicCmpAndSwp: 5, WRAtomicFetchAndAdd: 6, WRLocalInv: 7, WRBindMW: 8, WRSendWithInv: 9, WRTSO: 10,
		WRDriver1: 11, WRFlush: 14, WRAtomicWrite: 15}
	for o, v := range ops {
		assert.Equal(t, v, uint8(o), "%v value", o)
	}
	assert.Equal(t, SendFlags(1), SendFence, "IBV_SEND_FENCE")
	assert.Equal(t, SendFlags(2), SendSignaled, "IBV_SEND_SIGNALED")
	assert.Equal(t, SendFlags(4), SendSolicited, "IBV_SEND_SOLICITED")
	assert.Equal(t, SendFlags(8), SendInline, "IBV_SEND_INLINE")
	for ev, v := range map[EventType]uint8{EventSRQLimitReached: 15, EventQPLastWQEReached: 16, EventSQDrained: 5, EventCommEst: 4, EventWQFatal: 19} {
		assert.Equal(t, v, uint8(ev), "event %v value", ev)
	}
	assert.Equal(t, "SRQ limit reached", EventSRQLimitReached.String())
	assert.Equal(t, "unknown", EventType(20).String())
}
