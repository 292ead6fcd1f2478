package perftest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

var update = flag.Bool("update", false, "rewrite the golden output files")

// step is one message of a recorded conversation, seen from the side gorxe plays: a message
// gorxe must write, or one the recorded peer sends.
type step struct {
	write bool
	data  []byte
}

// replay is a Stream that plays the recorded peer of a conversation and checks, message by
// message, that gorxe writes what the recorded side wrote, in the same order.
type replay struct {
	t        *testing.T
	steps    []step
	server   bool   // gorxe plays the server
	timeouts []bool // whether each SetTimeout set a limit
}

func newReplay(t *testing.T, c *conversation, client bool) *replay {
	r := &replay{t: t, server: !client}
	for _, m := range c.msgs {
		r.steps = append(r.steps, step{write: m.fromClient == client, data: m.data})
	}
	return r
}

// skipPeerDone drops the peer's "done", which neither perftest nor gorxe reads.
func (r *replay) skipPeerDone() {
	for len(r.steps) > 0 && !r.steps[0].write && bytes.Equal(r.steps[0].data, doneMsg) {
		r.steps = r.steps[1:]
	}
}

func (r *replay) Write(p []byte, op string) error {
	r.t.Helper()
	r.skipPeerDone()
	if len(r.steps) == 0 || !r.steps[0].write {
		return fmt.Errorf("%s: gorxe wrote %q where the recorded side read", op, p)
	}
	want := r.steps[0].data
	r.steps = r.steps[1:]
	switch {
	case len(p) == VersionLen && len(want) == VersionLen:
		// gorxe advertises its own version.
		assert.Equal(r.t, AppendVersion(nil, Version), p, "%s: version message %q", op, p)
	case r.server && len(p) == ReportFieldLen && len(want) == ReportFieldLen:
		// perftest's server sends an uninitialised report; gorxe's is zero.
		assert.Equal(r.t, make([]byte, ReportFieldLen), p, "%s: server report field %x, want zeros", op, p)
	case !bytes.Equal(p, want):
		assert.Fail(r.t, fmt.Sprintf("%s: gorxe wrote %q, the recorded side %q", op, p, want))
	}
	return nil
}

func (r *replay) ReadFull(p []byte, op string) error {
	if len(r.steps) == 0 || r.steps[0].write {
		return fmt.Errorf("%s: gorxe reads where the recorded side wrote", op)
	}
	m := r.steps[0].data
	r.steps = r.steps[1:]
	if len(m) != len(p) {
		return fmt.Errorf("%s: gorxe reads %d bytes, the peer sent %d", op, len(p), len(m))
	}
	copy(p, m)
	return nil
}

func (r *replay) SetTimeout(d time.Duration) { r.timeouts = append(r.timeouts, d > 0) }

func (r *replay) ExplainClose(string) {}

// fakePlane stands in for the RDMA side: it hands out fixed addresses and results and records
// what the flow asked of it.
type fakePlane struct {
	dests  []Dest
	in     info
	report Report
	latRes latResult
	neg    negotiated
	remote []Dest
	calls  []string
	bwErr  error // what bw fails with, if it fails
}

func (f *fakePlane) setup(n *negotiated) ([]Dest, info, error) {
	f.neg = *n
	f.calls = append(f.calls, "setup")
	return f.dests, f.in, nil
}

func (f *fakePlane) connect(remote []Dest) error {
	f.remote = append([]Dest(nil), remote...)
	f.calls = append(f.calls, "connect")
	return nil
}

func (f *fakePlane) postRecvs(size int) error {
	f.calls = append(f.calls, fmt.Sprintf("postRecvs %d", size))
	return nil
}

func (f *fakePlane) bw(_ context.Context, size int) (Report, error) {
	f.calls = append(f.calls, fmt.Sprintf("bw %d", size))
	return f.report, f.bwErr
}

func (f *fakePlane) lat(_ context.Context, size int) (latResult, error) {
	f.calls = append(f.calls, fmt.Sprintf("lat %d", size))
	return f.latRes, nil
}

func (f *fakePlane) close() error { return nil }

// captureCase is one recorded perftest run, with the command line it ran with.
type captureCase struct {
	name string
	test Test
	args string
}

var captureCases = []captureCase{
	{"write_bw", Test{VerbWrite, BW}, "-x 1 -s 65536 -n 50 -F"},
	{"read_bw", Test{VerbRead, BW}, "-x 1 -s 65536 -n 50 -F"},
	{"send_bw", Test{VerbSend, BW}, "-x 1 -s 4096 -n 50 -F"},
	{"atomic_bw", Test{VerbAtomic, BW}, "-x 1 -n 50 -F"},
	{"send_lat", Test{VerbSend, Lat}, "-x 1 -s 64 -n 100 -F"},
}

// firstKey returns the first key message a side sent.
func firstKey(t *testing.T, c *conversation, client bool) Dest {
	t.Helper()
	for _, m := range c.side(client) {
		if len(m) == KeyLen {
			d, err := ParseKey(m)
			require.NoError(t, err)
			return d
		}
	}
	require.Fail(t, "no key message")
	return Dest{}
}

// firstReport returns the report a side sent, if it sent one.
func firstReport(t *testing.T, c *conversation, client bool) Report {
	t.Helper()
	var r Report
	i := 0
	for _, m := range c.side(client) {
		if len(m) == ReportFieldLen && i < ReportFields {
			require.NoError(t, SetReportField(&r, i, m))
			i++
		}
	}
	return r
}

// latStarts is a fixed latency result: iterations 5 µs apart, every tenth 1 µs slower.
func latStarts(n int) []int64 {
	s := make([]int64, n)
	var at int64 = 1
	for i := range s {
		s[i] = at
		at += 5000
		if i%10 == 9 {
			at += 1000
		}
	}
	return s
}

// TestFlowAgainstCapture plays each side of every recorded perftest run against the other
// side's recorded messages: gorxe must send the same messages (the same key messages, barriers,
// reports and "done"), in the same order, given the recorded side's addresses and results. The
// output of each side is compared with a golden file.
func TestFlowAgainstCapture(t *testing.T) {
	runs := perftestRuns(t)
	for i, cc := range captureCases {
		for _, client := range []bool{true, false} {
			side := "server"
			if client {
				side = "client"
			}
			t.Run(cc.name+"/"+side, func(t *testing.T) {
				conv := runs[i]
				args := strings.Fields(cc.args)
				if client {
					args = append(args, "10.99.0.2")
				}
				p, err := ParseArgs(cc.test, args)
				require.NoError(t, err)
				mine := firstKey(t, conv, client)
				fp := &fakePlane{
					dests:  []Dest{mine},
					in:     info{device: "gorxe_eth0", mtuBytes: 1024, gidIndex: 1, outReads: mine.OutReads},
					report: firstReport(t, conv, true),
					latRes: latResult{starts: latStarts(p.Iters), iters: p.Iters},
				}
				if cc.test.Verb == VerbSend {
					// send_bw exchanges no report: each side prints its own.
					fp.report = Report{Size: 4096, Iters: 50, BWPeak: 31.25, BWAvg: 30.52, MsgRate: 0.007813}
				}
				rp := newReplay(t, conv, client)
				var out, errs bytes.Buffer
				f := &flow{p: p, x: newSession(rp, client, false), s: rp, pl: fp, out: &out, full: true,
					warn: func(s string) { errs.WriteString(s + "\n") }, cycleBuffer: 4096}
				require.NoError(t, f.run(context.Background(), gorxe.MTU1024))
				rp.skipPeerDone()
				if len(rp.steps) != 0 {
					assert.Fail(t, fmt.Sprintf("%d recorded messages left over, first %q", len(rp.steps), rp.steps[0].data))
				}
				want := firstKey(t, conv, !client)
				assert.False(t, len(fp.remote) != 1 || fp.remote[0] != want, "connected to %+v, want %+v", fp.remote, want)
				assert.Equal(t, (negotiated{mtu: gorxe.MTU1024, cycleBuffer: 4096, cacheLine: 64}), fp.neg, "negotiated %+v", fp.neg)
				checkGolden(t, filepath.Join("testdata", "golden", cc.name+"-"+side+".txt"), out.String())
			})
		}
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "%v (run with -update to create it)", err)
	assert.Equal(t, string(want), got, "output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
}

// TestFlowCalls checks where each test drives the RDMA side relative to the exchange.
func TestFlowCalls(t *testing.T) {
	tests := []struct {
		test   Test
		args   string
		client []string
		server []string
	}{
		{Test{VerbWrite, BW}, "-n 5", []string{"setup", "connect", "bw 65536"}, []string{"setup", "connect"}},
		{Test{VerbWrite, BW}, "-n 5 -a", append([]string{"setup", "connect"}, everySize("bw")...), []string{"setup", "connect"}},
		{Test{VerbSend, BW}, "-n 5 -a", append([]string{"setup", "connect"}, everySize("bw")...),
			append([]string{"setup", "connect"}, interleave(everySize("postRecvs"), everySize("bw"))...)},
		{Test{VerbSend, BW}, "-n 5 -s 16", []string{"setup", "connect", "bw 16"}, []string{"setup", "connect", "postRecvs 16", "bw 16"}},
		{Test{VerbWrite, Lat}, "-n 5", []string{"setup", "connect", "lat 2"}, []string{"setup", "connect", "lat 2"}},
		{Test{VerbRead, Lat}, "-n 5", []string{"setup", "connect", "lat 2"}, []string{"setup", "connect"}},
		{Test{VerbAtomic, Lat}, "-n 5", []string{"setup", "connect", "lat 8"}, []string{"setup", "connect"}},
		{Test{VerbSend, Lat}, "-n 5", []string{"setup", "connect", "postRecvs 2", "lat 2"}, []string{"setup", "connect", "postRecvs 2", "lat 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.test.Name()+" "+tt.args, func(t *testing.T) {
			cli, srv := runPair(t, tt.test, strings.Fields(tt.args), nil)
			assert.Equal(t, fmt.Sprint(tt.client), fmt.Sprint(cli.calls), "client calls %v, want %v", cli.calls, tt.client)
			assert.Equal(t, fmt.Sprint(tt.server), fmt.Sprint(srv.calls), "server calls %v, want %v", srv.calls, tt.server)
		})
	}
}

// everySize lists a call for every size of -a: 2 to 2^23.
func everySize(call string) []string {
	var out []string
	for n := 2; n <= maxSize; n *= 2 {
		out = append(out, fmt.Sprintf("%s %d", call, n))
	}
	return out
}

func interleave(a, b []string) []string {
	var out []string
	for i := range a {
		out = append(out, a[i], b[i])
	}
	return out
}

// runPair runs both sides of a test against each other over an in-memory stream, with fake
// planes, and returns the client's plane and the server's.
func runPair(t *testing.T, test Test, args []string, tweak func(*Params)) (*fakePlane, *fakePlane) {
	t.Helper()
	a, b := newPipeStreams()
	planes := [2]*fakePlane{}
	errs := make(chan error, 2)
	for i, client := range []bool{true, false} {
		argv := append([]string(nil), args...)
		if client {
			argv = append(argv, "peer")
		}
		p, err := ParseArgs(test, argv)
		require.NoError(t, err)
		if tweak != nil {
			tweak(p)
		}
		fp := &fakePlane{
			dests:  []Dest{{QPN: uint32(0x10 + i), PSN: uint32(i), GID: GIDFromString(t, "10.0.0.1")}},
			in:     info{device: "gorxe_test", mtuBytes: 1024, gidIndex: 1},
			report: Report{Size: 2, Iters: 5, BWPeak: 1, BWAvg: 1, MsgRate: 1},
			latRes: latResult{starts: latStarts(p.Iters), iters: p.Iters},
		}
		planes[i] = fp
		s := a
		if !client {
			s = b
		}
		f := &flow{p: p, x: newSession(s, client, false), s: s, pl: fp, out: new(bytes.Buffer), full: true,
			warn: func(string) {}, cycleBuffer: 4096}
		go func() {
			err := f.run(context.Background(), gorxe.MTU1024)
			s.close()
			errs <- err
		}()
	}
	for range 2 {
		require.NoError(t, <-errs)
	}
	return planes[0], planes[1]
}

// pipeStream is one end of an in-memory out-of-band connection.
type pipeStream struct {
	in, out chan []byte
	closed  chan struct{}
	peer    *pipeStream
}

func newPipeStreams() (*pipeStream, *pipeStream) {
	ab, ba := make(chan []byte, 64), make(chan []byte, 64)
	a := &pipeStream{in: ba, out: ab, closed: make(chan struct{})}
	b := &pipeStream{in: ab, out: ba, closed: make(chan struct{})}
	a.peer, b.peer = b, a
	return a, b
}

var errPipeClosed = errors.New("peer closed the connection")

func (s *pipeStream) Write(p []byte, op string) error {
	select {
	case s.out <- append([]byte(nil), p...):
		return nil
	case <-s.peer.closed:
		return fmt.Errorf("%s: %w", op, errPipeClosed)
	}
}

func (s *pipeStream) ReadFull(p []byte, op string) error {
	select {
	case m := <-s.in:
		if len(m) != len(p) {
			return fmt.Errorf("%s: read %d bytes, the peer wrote %d", op, len(p), len(m))
		}
		copy(p, m)
		return nil
	case <-s.peer.closed:
		select {
		case m := <-s.in:
			copy(p, m)
			return nil
		default:
		}
		return fmt.Errorf("%s: %w", op, errPipeClosed)
	}
}

func (s *pipeStream) SetTimeout(time.Duration) {}

func (s *pipeStream) ExplainClose(string) {}

func (s *pipeStream) close() { close(s.closed) }

func (f *fakePlane) cmConnect(context.Context) ([]Dest, error) {
	f.calls = append(f.calls, "cmConnect")
	return f.dests, nil
}
