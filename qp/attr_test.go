package qp

import (
	"errors"
	"testing"

	"github.com/gorxe/gorxe/mr"
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
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ae *AttrError
			if !errors.As(err, &ae) || ae.Name != c.field || !errors.Is(err, ErrInvalidAttr) {
				t.Fatalf("got %v, want AttrError on %s", err, c.field)
			}
			if after, _ := q.Query(); after != before {
				t.Fatalf("rejected modify changed attributes")
			}
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
	if err := q.Modify(&a, AttrState|transitions[StateInit][StateRTR].req[TypeRC]); !errors.As(err, &ae) || ae.Name != "path_mtu" {
		t.Fatalf("MTU above port max: %v", err)
	}
}

func TestAppliedValues(t *testing.T) {
	e := newEnv(t)
	q := placeIn(e, TypeRC, StateInit)
	a := fullAttr()
	a.State, a.RQPSN, a.MaxDestRdAtomic = StateRTR, 0xABCDEF12, 5
	if err := q.Modify(&a, AttrState|transitions[StateInit][StateRTR].req[TypeRC]); err != nil {
		t.Fatal(err)
	}
	a = fullAttr()
	a.State, a.SQPSN, a.MaxRdAtomic = StateRTS, 0xFF000001, 3
	if err := q.Modify(&a, AttrState|transitions[StateRTR][StateRTS].req[TypeRC]); err != nil {
		t.Fatal(err)
	}
	got, init := q.Query()
	if got.RQPSN != 0xCDEF12 || got.SQPSN != 1 {
		t.Errorf("PSNs not masked to 24 bits: %#x %#x", got.RQPSN, got.SQPSN)
	}
	if got.MaxDestRdAtomic != 8 || got.MaxRdAtomic != 4 {
		t.Errorf("rd atomics %d/%d, want 4/8 (rounded up)", got.MaxRdAtomic, got.MaxDestRdAtomic)
	}
	if got.State != StateRTS || got.CurState != StateRTS || got.PathMTU != MTU1024 || got.DestQPNum != 0x77 ||
		got.AHAttr != testAV() || got.Timeout != 14 || got.RetryCnt != 7 || got.MinRNRTimer != 12 {
		t.Errorf("attributes not applied: %+v", got)
	}
	if init.Type != TypeRC || init.Cap != defaultCaps() || got.Cap != defaultCaps() {
		t.Errorf("init attributes %+v", init)
	}
	for in, want := range map[uint8]uint8{0: 0, 1: 1, 2: 2, 3: 4, 5: 8, 64: 64, 65: 128, 128: 128} {
		if roundPow2(in) != want {
			t.Errorf("roundPow2(%d) = %d", in, roundPow2(in))
		}
	}
}

func TestMTUHelpers(t *testing.T) {
	for m, b := range map[MTU]int{MTU256: 256, MTU512: 512, MTU1024: 1024, MTU2048: 2048, MTU4096: 4096, 0: 0, 6: 0} {
		if m.Bytes() != b {
			t.Errorf("%d.Bytes() = %d", m, m.Bytes())
		}
	}
	for n, want := range map[int]MTU{256: MTU256, 1500 - 28 - 16: MTU1024, 4096: MTU4096, 9000: MTU4096} {
		if got, ok := MTUFromBytes(n); !ok || got != want {
			t.Errorf("MTUFromBytes(%d) = %v %v", n, got, ok)
		}
	}
	if _, ok := MTUFromBytes(255); ok {
		t.Error("MTUFromBytes(255) ok")
	}
	if MTU1024.String() != "1024" || StateRTS.String() != "RTS" || TypeUD.String() != "UD" {
		t.Error("String methods")
	}
	if (AttrState | AttrQKey | 1<<30).String() != "STATE|QKEY|0x40000000" {
		t.Errorf("AttrMask.String: %s", (AttrState | AttrQKey | 1<<30).String())
	}
}

func TestEnumValues(t *testing.T) {
	if TypeRC != 2 || TypeUC != 3 || TypeUD != 4 || TypeGSI != 1 {
		t.Error("QP type values")
	}
	if StateReset != 0 || StateInit != 1 || StateRTR != 2 || StateRTS != 3 || StateSQD != 4 || StateSQE != 5 || StateErr != 6 {
		t.Error("QP state values")
	}
	if AttrDestQPN != 1<<20 || AttrCap != 1<<19 || AttrSQPSN != 1<<16 || AttrAV != 1<<7 || AttrRateLimit != 1<<25 {
		t.Error("attr mask values")
	}
	ops := map[WROpcode]uint8{WRRDMAWrite: 0, WRRDMAWriteWithImm: 1, WRSend: 2, WRSendWithImm: 3, WRRDMARead: 4,
		WRAtomicCmpAndSwp: 5, WRAtomicFetchAndAdd: 6, WRLocalInv: 7, WRBindMW: 8, WRSendWithInv: 9, WRTSO: 10,
		WRDriver1: 11, WRFlush: 14, WRAtomicWrite: 15}
	for o, v := range ops {
		if uint8(o) != v {
			t.Errorf("%v = %d, want %d", o, o, v)
		}
	}
	if SendFence != 1 || SendSignaled != 2 || SendSolicited != 4 || SendInline != 8 {
		t.Error("send flag values")
	}
	if EventSRQLimitReached != 15 || EventQPLastWQEReached != 16 || EventSQDrained != 5 || EventCommEst != 4 ||
		EventWQFatal != 19 || EventSRQLimitReached.String() != "SRQ limit reached" || EventType(20).String() != "unknown" {
		t.Error("event values or texts")
	}
}
