package mr

import (
	"errors"
	"testing"
)

func TestAccessValuesMatchLibibverbs(t *testing.T) {
	want := map[Access]uint32{
		AccessLocalWrite: 1, AccessRemoteWrite: 2, AccessRemoteRead: 4, AccessRemoteAtomic: 8,
		AccessMWBind: 16, AccessZeroBased: 32, AccessOnDemand: 64, AccessHugeTLB: 128,
		AccessFlushGlobal: 256, AccessFlushPersistent: 512, AccessRelaxedOrdering: 1 << 20,
	}
	for a, v := range want {
		eq(t, v, uint32(a), a.String())
	}
	eq(t, uint32(1), uint32(ReregChangeTranslation))
	eq(t, uint32(2), uint32(ReregChangePD))
	eq(t, uint32(4), uint32(ReregChangeAccess))
	eq(t, uint8(1), uint8(MWType1))
	eq(t, uint8(2), uint8(MWType2))
}

func TestAccessString(t *testing.T) {
	eq(t, "0", Access(0).String())
	eq(t, "LOCAL_WRITE|REMOTE_READ", (AccessLocalWrite | AccessRemoteRead).String())
	eq(t, "FLUSH_PERSISTENT|RELAXED_ORDERING|0x800", (AccessFlushPersistent | AccessRelaxedOrdering | 1<<11).String())
	check(t, (AccessLocalWrite | AccessRemoteWrite).Has(AccessRemoteWrite))
	check(t, !AccessLocalWrite.Has(AccessLocalWrite|AccessRemoteRead))
}

func TestRegistrationAccessRules(t *testing.T) {
	tests := []struct {
		access Access
		ok     bool
	}{
		{0, true},
		{AccessLocalWrite, true},
		{AccessRemoteRead, true},
		{AccessRemoteWrite, false},
		{AccessRemoteAtomic, false},
		{AccessRemoteWrite | AccessRemoteRead, false},
		{AccessLocalWrite | AccessRemoteWrite | AccessRemoteAtomic, true},
		{AccessMWBind | AccessOnDemand | AccessHugeTLB | AccessRelaxedOrdering, true},
		{AccessFlushGlobal | AccessFlushPersistent, true},
		{1 << 10, false},
		{1 << 21, false},
	}
	e := newEnv(t)
	for _, tc := range tests {
		m, err := e.t.RegMR(e.pd, make([]byte, 64), tc.access)
		if tc.ok {
			noErr(t, err, tc.access.String())
			noErr(t, m.DeregMR())
		} else {
			isErr(t, err, ErrAccessFlags, tc.access.String())
			var me *Error
			check(t, errors.As(err, &me), "want *Error")
			eq(t, "reg_mr", me.Op)
		}
	}
}
