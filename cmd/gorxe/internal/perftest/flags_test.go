package perftest

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/loglevel"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

var (
	wbw  = Test{VerbWrite, BW}
	rbw  = Test{VerbRead, BW}
	sbw  = Test{VerbSend, BW}
	abw  = Test{VerbAtomic, BW}
	wlat = Test{VerbWrite, Lat}
	rlat = Test{VerbRead, Lat}
	slat = Test{VerbSend, Lat}
	alat = Test{VerbAtomic, Lat}
)

// settings is the part of Params a table row checks.
type settings struct {
	size, iters, tx, rx, cqMod, inline, qps, postList int
	conn                                              ConnType
	noPeak                                            bool
}

func settingsOf(p *Params) settings {
	return settings{p.Size, p.Iters, p.TxDepth, p.RxDepth, p.CQMod, p.Inline, p.NumQPs, p.PostList, p.Conn, p.NoPeak}
}

func TestDefaults(t *testing.T) {
	tests := []struct {
		test Test
		args string
		want settings
	}{
		// Bandwidth tests send 64 KiB messages, which makes perftest signal every one (-Q 1).
		{wbw, "host", settings{65536, 5000, 128, 1, 1, 0, 1, 1, RC, false}},
		{rbw, "host", settings{65536, 1000, 128, 1, 1, 0, 1, 1, RC, false}},
		{sbw, "host", settings{65536, 1000, 128, 512, 1, 0, 1, 1, RC, false}},
		{abw, "host", settings{8, 1000, 128, 1, 100, 0, 1, 1, RC, false}},
		{wlat, "host", settings{2, 1000, 1, 1, 1, 220, 1, 1, RC, false}},
		{rlat, "host", settings{2, 1000, 1, 1, 1, 0, 1, 1, RC, false}},
		{slat, "host", settings{2, 1000, 1, 512, 1, 236, 1, 1, RC, false}},
		{alat, "host", settings{8, 1000, 1, 1, 1, 0, 1, 1, RC, false}},
		{slat, "-c UD host", settings{2, 1000, 1, 1000, 1, 188, 1, 1, UD, false}},
		// The send_bw server never computes a peak; nor does anyone above 20000 iterations.
		{sbw, "", settings{65536, 1000, 128, 512, 1, 0, 1, 1, RC, true}},
		{wbw, "-n 30000 host", settings{65536, 30000, 128, 1, 1, 0, 1, 1, RC, true}},
		// Small messages keep the default moderation; depths shrink to the iteration count.
		{wbw, "-s 4096 -n 50 host", settings{4096, 50, 50, 1, 50, 0, 1, 1, RC, false}},
		{sbw, "-s 64 -n 99 -r 99 host", settings{64, 99, 99, 100, 99, 0, 1, 1, RC, false}},
		{sbw, "-c UC -n 20000 host", settings{65536, 20000, 128, 16000, 1, 0, 1, 1, UC, false}},
		{wbw, "-s 64 -Q 10 -q 4 -t 64 host", settings{64, 5000, 64, 1, 10, 0, 4, 1, RC, false}},
		{wbw, "-s 64 -l 8 host", settings{64, 5000, 128, 1, 8, 0, 1, 8, RC, false}},
		{wbw, "-s 65536 -Q 4 host", settings{65536, 5000, 128, 1, 4, 0, 1, 1, RC, false}},
		{wlat, "-I 64 host", settings{2, 1000, 1, 1, 1, 64, 1, 1, RC, false}},
		{wbw, "--size=1K --iters=10 host", settings{1024, 10, 10, 1, 10, 0, 1, 1, RC, false}},
		{wbw, "-s2M -n0x10 host", settings{2 << 20, 16, 16, 1, 1, 0, 1, 1, RC, false}},
	}
	for _, tt := range tests {
		t.Run(tt.test.Name()+" "+tt.args, func(t *testing.T) {
			p, err := ParseArgs(tt.test, strings.Fields(tt.args))
			require.NoError(t, err)
			got := settingsOf(p)
			assert.Equal(t, tt.want, got, "got  %+v\nwant %+v", got, tt.want)
		})
	}
}

func TestOptions(t *testing.T) {
	p, err := ParseArgs(abw, strings.Fields("-d eth0 --bind 10.0.0.1 -p 9999 -x 3 -m 1024 -A CMP_AND_SWAP -o 16 -u 18 -S 2 --tclass 32 -e --report_gbits --ipv6 --timeout 3s --output bandwidth -F server.example"))
	require.NoError(t, err)
	want := Params{Device: "eth0", Common: tool.Common{Bind: "10.0.0.1"}, Port: 9999, GIDIndex: 3, MTU: 1024, AtomicType: CmpAndSwap, OutReads: 16,
		QPTimeout: 18, SL: 2, TClass: 32, Events: true, ReportGbits: true, IPv6: true, Timeout: 3 * time.Second, Output: "bandwidth", Server: "server.example"}
	got := Params{Device: p.Device, Common: p.Common, Port: p.Port, GIDIndex: p.GIDIndex, MTU: p.MTU, AtomicType: p.AtomicType, OutReads: p.OutReads,
		QPTimeout: p.QPTimeout, SL: p.SL, TClass: p.TClass, Events: p.Events, ReportGbits: p.ReportGbits, IPv6: p.IPv6, Timeout: p.Timeout, Output: p.Output, Server: p.Server}
	assert.Equal(t, want.Device, got.Device, "got %+v", got)
	assert.Equal(t, want.Common.Bind, got.Common.Bind, "got %+v", got)
	assert.Equal(t, want.Port, got.Port, "got %+v", got)
	assert.Equal(t, want.GIDIndex, got.GIDIndex, "got %+v", got)
	assert.Equal(t, want.MTU, got.MTU, "got %+v", got)
	assert.Equal(t, want.AtomicType, got.AtomicType, "got %+v", got)
	assert.Equal(t, want.OutReads, got.OutReads, "got %+v", got)
	assert.Equal(t, want.QPTimeout, got.QPTimeout, "got %+v", got)
	assert.Equal(t, want.SL, got.SL, "got %+v", got)
	assert.Equal(t, want.TClass, got.TClass, "got %+v", got)
	assert.True(t, got.Events, "got %+v", got)
	assert.True(t, got.ReportGbits, "got %+v", got)
	assert.True(t, got.IPv6, "got %+v", got)
	assert.Equal(t, want.Timeout, got.Timeout, "got %+v", got)
	assert.Equal(t, want.Output, got.Output, "got %+v", got)

	p, err = ParseArgs(wbw, strings.Fields("-D 8 host"))
	assert.NoError(t, err, "-D 8: %+v, %v", p, err)
	assert.Equal(t, 8, p.Duration, "-D 8: %+v, %v", p, err)
	assert.Equal(t, 2, p.Margin, "-D 8: %+v, %v", p, err)
	assert.True(t, p.NoPeak, "-D 8: %+v, %v", p, err)
	p, err = ParseArgs(slat, strings.Fields("-a -c UD host"))
	assert.NoError(t, err, "-a -c UD: %+v, %v", p, err)
	assert.True(t, p.All, "-a -c UD: %+v, %v", p, err)
	assert.Equal(t, p.Size, p.bufSize(), "-a -c UD: %+v, %v", p, err)
	p, err = ParseArgs(wbw, strings.Fields("-a host"))
	assert.False(t, err != nil || p.bufSize() != maxSize || len(p.sizes()) != 23 || p.sizes()[0] != 2 || p.sizes()[22] != maxSize, "-a: %v, %v", p.sizes(), err)
	if _, err := ParseArgs(wbw, []string{"-h"}); !errors.Is(err, tool.ErrHelp) {
		assert.Fail(t, fmt.Sprintf("-h: %v", err))
	}
	if _, err := ParseArgs(rlat, []string{"--version"}); !errors.Is(err, ErrVersion) {
		assert.Fail(t, fmt.Sprintf("--version: %v", err))
	}
}

func TestOptionErrors(t *testing.T) {
	tests := []struct {
		test Test
		args string
		want string
		is   error
	}{
		{wbw, "-z9", "invalid option -- '9'", getopt.ErrUsage},
		{wbw, "--frobnicate", "unrecognized option '--frobnicate'", getopt.ErrUsage},
		{wbw, "-s", "requires an argument", getopt.ErrUsage},
		{wbw, "-n 3", "out of range", getopt.ErrUsage},
		{wbw, "-s 0", "out of range", getopt.ErrUsage},
		{wbw, "-s 10X", "not a number", getopt.ErrUsage},
		{wbw, "-c UD", "UD connection only possible in SEND verb", getopt.ErrUsage},
		{rbw, "-c UC", "UC connection not possible in READ/ATOMIC verbs", getopt.ErrUsage},
		{sbw, "-c XRC", "not supported", getopt.ErrUsage},
		{sbw, "-c FOO", "Invalid Connection type", getopt.ErrUsage},
		{wbw, "-A FETCH_AND_ADD", "only available in ATOMIC tests", getopt.ErrUsage},
		{abw, "-A ADD", "Invalid Atomic type", getopt.ErrUsage},
		{abw, "-s 16", "Message size cannot be changed for Atomic tests", getopt.ErrUsage},
		{alat, "-a", "-a is not available in Atomic tests", getopt.ErrUsage},
		{wlat, "-q 2", "only available in BW tests", getopt.ErrUsage},
		{wbw, "-r 10", "only available in SEND tests", getopt.ErrUsage},
		{rbw, "-I 10", "only available in SEND and WRITE tests", getopt.ErrUsage},
		{wbw, "-o 4", "only available in READ and ATOMIC tests", getopt.ErrUsage},
		{wbw, "-R -c UC", "UC is not supported in librdmacm", getopt.ErrUsage},
		{wbw, "-T 32", "TOS only valid for rdma_cm based QP", getopt.ErrUsage},
		{wbw, "-R -T 256", "out of range", getopt.ErrUsage},
		{wbw, "-R --retry_count -1", "out of range", getopt.ErrUsage},
		{sbw, "-b", "bidirectional", getopt.ErrUsage},
		{wbw, "--run_infinitely", "not supported", getopt.ErrUsage},
		{wlat, "-C", "CPU cycles", getopt.ErrUsage},
		{wbw, "-i 2", "only port 1", getopt.ErrUsage},
		{wbw, "-D 4 -f 2", "DURATION > 2*MARGIN", getopt.ErrUsage},
		{wbw, "-D 4 -a", "Duration mode currently doesn't support running on all sizes", getopt.ErrUsage},
		{wbw, "-s 64 -l 8 -Q 3", "Post list size must be a multiple of CQ moderation", getopt.ErrUsage},
		{wbw, "--output latency", "Output verbosity level for BW", getopt.ErrUsage},
		{wlat, "--output bandwidth", "Output verbosity level for LAT", getopt.ErrUsage},
		{wbw, "--latency_gap 5", "only for latency tests", getopt.ErrUsage},
		{wbw, "--force-link IB", "link layer is Ethernet", getopt.ErrUsage},
		{wbw, "--timeout soon", "not a duration", getopt.ErrUsage},
		{wbw, "a b", "too many arguments", getopt.ErrUsage},
	}
	for _, tt := range tests {
		t.Run(tt.test.Name()+" "+tt.args, func(t *testing.T) {
			_, err := ParseArgs(tt.test, strings.Fields(tt.args))
			require.Error(t, err, "no error")
			assert.ErrorIs(t, err, tt.is, "error %q, want one line with %q matching %v", err, tt.want, tt.is)
			assert.Contains(t, err.Error(), tt.want, "error %q, want one line with %q matching %v", err, tt.want, tt.is)
			assert.NotContains(t, err.Error(), "\n", "error %q, want one line with %q matching %v", err, tt.want, tt.is)
		})
	}
}

func TestTestNames(t *testing.T) {
	var names []string
	for _, tt := range Tests {
		names = append(names, tt.Name())
	}
	got := strings.Join(names, " ")
	assert.Equal(t, "write_bw read_bw send_bw atomic_bw write_lat read_lat send_lat atomic_lat", got, "names %s", got)
}

func TestUsage(t *testing.T) {
	for _, tt := range Tests {
		var b strings.Builder
		Usage(&b, tt)
		out := b.String()
		assert.Contains(t, out, "gorxe "+tt.Name()+" <host>", "%s usage:\n%s", tt.Name(), out)
		assert.Contains(t, out, "--iters", "%s usage:\n%s", tt.Name(), out)
		assert.Equal(t, bool((tt.Verb == VerbAtomic)), strings.Contains(out, "--atomic_type"), "%s usage lists options of other tests:\n%s", tt.Name(), out)
		assert.Equal(t, bool((tt.Kind == BW)), strings.Contains(out, "--qp="), "%s usage lists options of other tests:\n%s", tt.Name(), out)
	}
}

func TestLogLevelOption(t *testing.T) {
	p, err := ParseArgs(wbw, nil)
	require.NoError(t, err)
	assert.Equal(t, loglevel.Default, p.Common.LogLevel, "default")
	p, err = ParseArgs(slat, strings.Fields("--log-level debug"))
	require.NoError(t, err)
	assert.Equal(t, slog.LevelDebug, p.Common.LogLevel)
	_, err = ParseArgs(rbw, strings.Fields("--log-level=loud"))
	assert.ErrorIs(t, err, getopt.ErrUsage)
}

// -R connects the QPs through RDMA-CM and runs the exchange over it too (perftest's work_rdma_cm
// sets use_rdma_cm); -z alone moves only the exchange; -T and --retry_count go with them.
func TestRDMACMOptions(t *testing.T) {
	tests := []struct {
		test            Test
		args            string
		rdmaCM, commCM  bool
		tos, retryCount int
	}{
		{wbw, "", false, false, -1, 7},
		{wbw, "-R", true, true, -1, 7},
		{rlat, "--rdma_cm -T 96 --retry_count 3", true, true, 96, 3},
		{sbw, "-z -c UD", false, true, -1, 7},
		{slat, "-R -c UD -T 32", true, true, 32, 7},
		{slat, "--comm_rdma_cm --retry_count=0", false, true, -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.test.Name()+" "+tt.args, func(t *testing.T) {
			p, err := ParseArgs(tt.test, strings.Fields(tt.args))
			require.NoError(t, err)
			assert.Equal(t, tt.rdmaCM, p.RDMACM, "RDMACM")
			assert.Equal(t, tt.commCM, p.CommRDMACM, "CommRDMACM")
			assert.Equal(t, tt.tos, p.TOS, "TOS")
			assert.Equal(t, tt.retryCount, p.RetryCount, "RetryCount")
		})
	}
}

// TestCOptionsGorxeDoesNotNeed: ib_write_bw's options that change nothing on gorxe run; the two
// it can honour simply are; the others are refused saying why.
func TestCOptionsGorxeDoesNotNeed(t *testing.T) {
	p, err := ParseArgs(wbw, strings.Fields("--recv_post_list 8 --dlid 3 --use_old_post_send --disable_pcie_relaxed -X 0 --pkey_index 0 host"))
	require.NoError(t, err)
	assert.Equal(t, "host", p.Server)

	p, err = ParseArgs(wbw, strings.Fields("--source_ip 127.0.0.7 --wait_destroy 2 host"))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.7", p.Common.Bind, "--source_ip is the device's address")
	assert.Equal(t, 2*time.Second, p.WaitDestroy)
	p, err = ParseArgs(wbw, strings.Fields("--source_ip 127.0.0.7 --bind 127.0.0.8 host"))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.8", p.Common.Bind, "--bind wins")

	for args, want := range map[string]string{
		"--flow_label 5":       "--flow_label is not supported by gorxe: gorxe derives the flow label from the QPNs",
		"-B 00:11:22:33:44:55": "-B/--source_mac is not supported by gorxe: raw Ethernet QPs",
		"-j 10.0.0.1":          "-j is not supported by gorxe: raw Ethernet QPs",
		"--use_cuda 0":         "--use_cuda is not supported by gorxe: GPU memory",
	} {
		_, err := ParseArgs(wbw, strings.Fields(args))
		assert.EqualError(t, err, want, args)
		assert.ErrorIs(t, err, getopt.ErrUsage, args)
	}
}
