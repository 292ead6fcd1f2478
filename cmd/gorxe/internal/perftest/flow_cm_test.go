package perftest

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// With -R, ib_write_bw's client exchanges what it exchanges over TCP, with binary key messages:
// after the MTU a barrier of zeros, the RDMA-CM connections, another barrier of zeros, then the
// keys of the QPs RDMA-CM made, twice, a barrier, the measurement, a barrier, the report and the
// closing barrier, without "done".
func TestFlowRDMACM(t *testing.T) {
	p, err := ParseArgs(wbw, []string{"-R", "-n", "5", "-s", "64", "host"})
	require.NoError(t, err)
	peerKey := AppendKeyCM(nil, &Dest{QPN: 0x22, RKey: 0x1234, VAddr: 0x7f0000001000, GID: GIDFromString(t, "10.0.0.2")})
	zeros := make([]byte, KeyLenCM)
	report := make([]byte, ReportFieldLen)
	s := &script{peer: [][]byte{AppendVersion(nil, "6.06"), AppendSysData(nil, 4096), AppendSysData(nil, 64), AppendMTU(nil, gorxe.MTU1024),
		zeros, zeros, peerKey, peerKey, peerKey, peerKey, report, report, report, report, report, peerKey}}
	mine := Dest{QPN: 0x11, RKey: 0x4321, VAddr: 0x7f0000002000, GID: GIDFromString(t, "10.0.0.1"), GIDIndex: 1}
	fp := &fakePlane{dests: []Dest{mine}, report: Report{Size: 64, Iters: 5}}
	f := &flow{p: p, x: newSession(s, true, true), s: s, pl: fp, out: new(bytes.Buffer), full: true, warn: func(string) {}, cycleBuffer: 4096}
	require.NoError(t, f.run(context.Background(), gorxe.MTU1024))

	assert.Equal(t, []string{"setup", "cmConnect", "connect", "bw 64"}, fp.calls)
	assert.Equal(t, []Dest{{QPN: 0x22, RKey: 0x1234, VAddr: 0x7f0000001000, GID: GIDFromString(t, "10.0.0.2")}}, fp.remote)
	var sizes []int
	for _, m := range s.wrote {
		sizes = append(sizes, len(m))
	}
	assert.Equal(t, []int{VersionLen, SysDataLen, SysDataLen, MTULen, KeyLenCM, KeyLenCM, KeyLenCM, KeyLenCM, KeyLenCM, KeyLenCM,
		ReportFieldLen, ReportFieldLen, ReportFieldLen, ReportFieldLen, ReportFieldLen, KeyLenCM}, sizes)
	assert.Equal(t, zeros, s.wrote[4], "the barrier before the connections")
	assert.Equal(t, zeros, s.wrote[5], "the barrier after them")
	assert.Equal(t, AppendKeyCM(nil, &mine), s.wrote[6], "the key of the QP")
	assert.Empty(t, s.peer, "every message of the peer read")
}
