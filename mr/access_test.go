package mr

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAccessValuesMatchLibibverbs(t *testing.T) {
	want := map[Access]uint32{
		AccessLocalWrite: 1, AccessRemoteWrite: 2, AccessRemoteRead: 4, AccessRemoteAtomic: 8,
		AccessMWBind: 16, AccessZeroBased: 32, AccessOnDemand: 64, AccessHugeTLB: 128,
		AccessFlushGlobal: 256, AccessFlushPersistent: 512, AccessRelaxedOrdering: 1 << 20,
	}
	for a, v := range want {
		require.Equal(t, v, uint32(a), a.String())
	}
	require.Equal(t, uint32(1), uint32(ReregChangeTranslation))
	require.Equal(t, uint32(2), uint32(ReregChangePD))
	require.Equal(t, uint32(4), uint32(ReregChangeAccess))
	require.Equal(t, uint8(1), uint8(MWType1))
	require.Equal(t, uint8(2), uint8(MWType2))
}

func TestAccessString(t *testing.T) {
	require.Equal(t, "0", Access(0).String())
	require.Equal(t, "LOCAL_WRITE|REMOTE_READ", (AccessLocalWrite | AccessRemoteRead).String())
	require.Equal(t, "FLUSH_PERSISTENT|RELAXED_ORDERING|0x800", (AccessFlushPersistent | AccessRelaxedOrdering | 1<<11).String())
	require.True(t, (AccessLocalWrite | AccessRemoteWrite).Has(AccessRemoteWrite))
	require.True(t, !AccessLocalWrite.Has(AccessLocalWrite|AccessRemoteRead))
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
			require.NoError(t, err, tc.access.String())
			require.NoError(t, m.DeregMR())
		} else {
			require.ErrorIs(t, err, ErrAccessFlags, tc.access.String())
			var me *Error
			require.True(t, errors.As(err, &me), "want *Error")
			require.Equal(t, "reg_mr", me.Op)
		}
	}
}
