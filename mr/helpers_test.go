package mr

import (
	"errors"
	"fmt"
	"testing"
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
	noErr(t, err)
	return env{tb, pd}
}

const allRemote = AccessLocalWrite | AccessRemoteRead | AccessRemoteWrite | AccessRemoteAtomic |
	AccessFlushGlobal | AccessFlushPersistent

func (e env) reg(t testing.TB, buf []byte, access Access) *MR {
	t.Helper()
	m, err := e.t.RegMR(e.pd, buf, access)
	noErr(t, err)
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
	eq(t, n, s.CopyOut(out, 0))
	return out, nil
}

func noErr(t testing.TB, err error, msg ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error %v %s", err, fmt.Sprint(msg...))
	}
}

func isErr(t testing.TB, err, target error, msg ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want %v %s", err, target, fmt.Sprint(msg...))
	}
}

func eq[T comparable](t testing.TB, want, got T, msg ...any) {
	t.Helper()
	if want != got {
		t.Fatalf("got %v, want %v %s", got, want, fmt.Sprint(msg...))
	}
}

func ne[T comparable](t testing.TB, a, b T, msg ...any) {
	t.Helper()
	if a == b {
		t.Fatalf("both are %v %s", a, fmt.Sprint(msg...))
	}
}

func check(t testing.TB, cond bool, msg ...any) {
	t.Helper()
	if !cond {
		t.Fatalf("check failed: %s", fmt.Sprint(msg...))
	}
}
