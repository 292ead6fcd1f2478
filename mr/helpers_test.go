package mr

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// env is a table with one PD, the usual fixture.
type env struct {
	t  *Table
	pd *PD
}

func newEnv(t testing.TB) env {
	t.Helper()
	tb := NewTable()
	pd, err := tb.AllocPD()
	require.NoError(t, err)
	return env{tb, pd}
}

const allRemote = AccessLocalWrite | AccessRemoteRead | AccessRemoteWrite | AccessRemoteAtomic |
	AccessFlushGlobal | AccessFlushPersistent

func (e env) reg(t testing.TB, buf []byte, access Access) *MR {
	t.Helper()
	m, err := e.t.RegMR(e.pd, buf, access)
	require.NoError(t, err)
	return m
}

// pattern fills b with a position-dependent pattern.
func pattern(b []byte, seed byte) []byte {
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	return b
}

// readAll reads [va, va+n) through an rkey.
func readAll(t testing.TB, tb *Table, key uint32, pd *PD, qpn uint32, va uint64, n int) ([]byte, error) {
	t.Helper()
	s, err := tb.LookupRemote(key, pd, qpn, AccessRemoteRead, va, uint64(n))
	if err != nil {
		return nil, err
	}
	defer s.Release()
	out := make([]byte, n)
	require.Equal(t, n, s.CopyOut(out, 0))
	return out, nil
}
