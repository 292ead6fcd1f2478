package perftest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// script is a Stream whose peer sends fixed messages and which records what gorxe writes.
type script struct {
	peer   [][]byte
	wrote  [][]byte
	limits []time.Duration
}

func (s *script) Write(p []byte, op string) error {
	s.wrote = append(s.wrote, append([]byte(nil), p...))
	return nil
}

func (s *script) ReadFull(p []byte, op string) error {
	if len(s.peer) == 0 {
		return fmt.Errorf("%s: peer closed the connection", op)
	}
	m := s.peer[0]
	s.peer = s.peer[1:]
	if len(m) < len(p) {
		return fmt.Errorf("%s: peer closed the connection after %d of %d bytes", op, len(m), len(p))
	}
	copy(p, m)
	return nil
}

func (s *script) SetTimeout(d time.Duration) { s.limits = append(s.limits, d) }

func (s *script) ExplainClose(string) {}

func TestSessionVersions(t *testing.T) {
	tests := []struct {
		peer string
		is   error
		want string
	}{
		{"6.29", nil, ""},
		{"5.70", nil, ""},
		{"5.60", ErrPeerVersion, "the peer runs perftest 5.60; versions older than 5.70 are not supported"},
		// An rdma-core pingpong client's address message, cut to 16 bytes.
		{"0000:000011:5e65", ErrBadMessage, `version "0000:000011:5e65" is not a perftest version`},
		{"", ErrBadMessage, "not a perftest version"},
	}
	for _, tt := range tests {
		msg := AppendVersion(nil, tt.peer)
		if len(tt.peer) == VersionLen {
			msg = []byte(tt.peer) // no room for a NUL, as when a pingpong tool answers
		}
		s := &script{peer: [][]byte{msg}}
		_, err := newSession(s, true, false).versions()
		if tt.is == nil {
			assert.NoError(t, err, "peer %q", tt.peer)
			continue
		}
		assert.ErrorIs(t, err, tt.is, "peer %q: error %v, want %q", tt.peer, err, tt.want)
		assert.Contains(t, err.Error(), tt.want, "peer %q: error %v, want %q", tt.peer, err, tt.want)
	}
}

func TestSessionSysDataAndMTU(t *testing.T) {
	s := &script{peer: [][]byte{AppendSysData(nil, 65536), AppendSysData(nil, 32), []byte("2\x00"), []byte("9\x00")}}
	x := newSession(s, false, false)
	cb, cl, err := x.sysData(4096, 64)
	assert.NoError(t, err, "sysData: %d %d %v", cb, cl, err)
	assert.Equal(t, int32(65536), cb, "sysData: %d %d %v", cb, cl, err)
	assert.Equal(t, int32(64), cl, "sysData: %d %d %v", cb, cl, err)
	if m, err := x.mtu(gorxe.MTU1024); err != nil || m != gorxe.MTU512 {
		assert.Fail(t, fmt.Sprintf("peer asks 512: %v %v", m, err))
	}
	// A value that is no ibv_mtu leaves this side's MTU, as perftest does.
	if m, err := x.mtu(gorxe.MTU1024); err != nil || m != gorxe.MTU1024 {
		assert.Fail(t, fmt.Sprintf("peer sends 9: %v %v", m, err))
	}
	want := []string{"\x00\x00\x10\x00", "\x00\x00\x00\x40", "3\x00", "3\x00"}
	assert.Equal(t, fmt.Sprintf("%q", want), fmt.Sprintf("%q", s.wrote), "wrote %q, want %q", s.wrote, want)
}

func TestSessionReportsAndClose(t *testing.T) {
	mine := Report{Size: 4096, Iters: 50, BWPeak: 1.5, BWAvg: 1.25, MsgRate: 0.5}
	theirs := Report{Size: 65536, Iters: 7, BWPeak: 2, BWAvg: 3, MsgRate: 4}
	s := &script{}
	for i := range ReportFields {
		s.peer = append(s.peer, AppendReportField(nil, &theirs, i))
	}
	key := AppendKey(nil, &Dest{QPN: 9})
	s.peer = append(s.peer, key)
	x := newSession(s, true, false)
	got, err := x.reports(&mine)
	require.NoError(t, err, "reports: %+v %v", got, err)
	require.Equal(t, theirs, got, "reports: %+v %v", got, err)
	require.NoError(t, x.closeConnection(&Dest{QPN: 7}))
	n := len(s.wrote)
	assert.False(t, n != ReportFields+2 || string(s.wrote[n-1]) != "done\x00" || string(s.wrote[n-2]) != string(AppendKey(nil, &Dest{QPN: 7})), "wrote %q", s.wrote)
	// A peer that closes in the middle of the reports is an error, not a hang.
	s = &script{peer: [][]byte{AppendReportField(nil, &theirs, 0)}}
	if _, err := newSession(s, false, false).reports(&mine); err == nil || !strings.Contains(err.Error(), "couldn't read remote report") {
		assert.Fail(t, fmt.Sprintf("short reports: %v", err))
	}
}

// A peer whose GID is IPv6 while ours is IPv4 cannot be reached: perftest refuses, so does gorxe.
func TestGIDFamilyMismatch(t *testing.T) {
	f := &flow{p: &Params{}, local: []Dest{{GID: GIDFromString(t, "10.0.0.1")}}, remote: []Dest{{GID: GIDFromString(t, "fd00::1")}}}
	err := f.connect()
	assert.False(t, err == nil || !strings.Contains(err.Error(), "incompatible GID types") || strings.Contains(err.Error(), "\n"), "error %v", err)
}

// The exchange is bounded before the measurement and unbounded once a side may wait for the
// other's measurement.
func TestFlowTimeouts(t *testing.T) {
	runs := perftestRuns(t)
	p, err := ParseArgs(Test{VerbWrite, BW}, strings.Fields("-x 1 -s 65536 -n 50 --timeout 3s"))
	require.NoError(t, err)
	rp := newReplay(t, runs[0], false)
	f := &flow{p: p, x: newSession(rp, false, false), s: rp, pl: &fakePlane{dests: []Dest{firstKey(t, runs[0], false)}},
		out: new(strings.Builder), warn: func(string) {}, cycleBuffer: 4096}
	require.NoError(t, f.run(t.Context(), gorxe.MTU1024))
	assert.Equal(t, "[true false]", fmt.Sprint(rp.timeouts), "timeouts set: %v", rp.timeouts)
}
