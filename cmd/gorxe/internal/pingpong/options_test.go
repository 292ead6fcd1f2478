package pingpong

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/oob"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

func TestParseArgsDefaults(t *testing.T) {
	for _, k := range []Kind{RC, UC, UD, SRQ} {
		o, err := ParseArgs(k, nil)
		require.NoError(t, err, "%s", k.Name())
		want := Options{Kind: k, Port: 18515, IBPort: 1, Size: 4096, MTU: 1024, RxDepth: 500, Iters: 1000,
			GIDIndex: -1, NumQP: 16, Timeout: oob.DefaultTimeout, Common: tool.NewCommon()}
		if k == UD {
			want.Size = 1024
		}
		assert.Equal(t, want, o, "%s defaults = %+v, want %+v", k.Name(), o, want)
	}
}

func TestKindName(t *testing.T) {
	for k, want := range map[Kind]string{RC: "rc_pingpong", UC: "uc_pingpong", UD: "ud_pingpong", SRQ: "srq_pingpong", 9: "Kind(9)", -1: "Kind(-1)"} {
		got := k.Name()
		assert.Equal(t, want, got, "Kind(%d).Name() = %q, want %q", int(k), got, want)
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		kind Kind
		args []string
		want func(*Options)
	}{
		{RC, []string{"-g", "1", "-n", "20", "-s", "4096", "10.99.0.2"}, func(o *Options) { o.GIDIndex, o.Iters, o.Server = 1, 20, "10.99.0.2" }},
		{RC, []string{"10.99.0.2", "-g1", "-n20"}, func(o *Options) { o.GIDIndex, o.Iters, o.Server = 1, 20, "10.99.0.2" }},
		{RC, []string{"--port=1234", "--ib-dev", "eth0", "--ib-port=1", "--size=64", "--mtu=4096", "--rx-depth=10",
			"--iters=5", "--sl=3", "--events", "--gid-idx=0", "--chk"}, func(o *Options) {
			o.Port, o.IBDev, o.Size, o.MTU, o.RxDepth, o.Iters, o.SL, o.Events, o.GIDIndex, o.Check =
				1234, "eth0", 64, 4096, 10, 5, 3, true, 0, true
		}},
		{UC, []string{"-p", "0x4853", "-d", "gorxe_lo", "-m", "256", "-r", "0100", "-ec"}, func(o *Options) {
			o.Port, o.IBDev, o.MTU, o.RxDepth, o.Events, o.Check = 0x4853, "gorxe_lo", 256, 64, true, true
		}},
		{UD, []string{"-s", "512", "-l", "1"}, func(o *Options) { o.Size, o.SL = 512, 1 }},
		{SRQ, []string{"-q", "4", "-r", "8", "host"}, func(o *Options) { o.NumQP, o.RxDepth, o.Server = 4, 8, "host" }},
		{SRQ, []string{"--num-qp=255", "-r", "300"}, func(o *Options) { o.NumQP, o.RxDepth = 255, 300 }},
		{RC, []string{"-N"}, func(*Options) {}},
		{RC, []string{"--bind", "127.0.0.5", "--timeout=250ms"}, func(o *Options) { o.Common.Bind, o.Timeout = "127.0.0.5", 250*time.Millisecond }},
		{RC, []string{"--timeout", "0"}, func(o *Options) { o.Timeout = 0 }},
		{RC, []string{"--timeout", "3"}, func(o *Options) { o.Timeout = 3 * time.Second }},
		{RC, []string{"-o", "-P"}, func(o *Options) { o.odp, o.prefetch = true, true }},
		{UD, []string{"--log-level=debug"}, func(o *Options) { o.Common.LogLevel = slog.LevelDebug }},
		{SRQ, []string{"--log-level", "error"}, func(o *Options) { o.Common.LogLevel = slog.LevelError }},
	}
	for _, tc := range tests {
		want, _ := ParseArgs(tc.kind, nil)
		tc.want(&want)
		got, err := ParseArgs(tc.kind, tc.args)
		if !assert.NoError(t, err, "%s %q", tc.kind.Name(), tc.args) {
			continue
		}
		assert.Equal(t, want, got, "%s %q = %+v, want %+v", tc.kind.Name(), tc.args, got, want)
	}
}

func TestParseArgsErrors(t *testing.T) {
	tests := []struct {
		kind  Kind
		args  []string
		usage bool
		msg   string
	}{
		{RC, []string{"-p", "65536"}, true, "-p 65536: out of range"},
		{RC, []string{"-i", "0"}, true, "-i 0: out of range"},
		{RC, []string{"-m", "1000"}, true, "-m 1000: not an IB MTU"},
		{UD, []string{"-m", "1024"}, true, "invalid option -- 'm'"},
		{UC, []string{"-q", "2"}, true, "invalid option -- 'q'"},
		{UC, []string{"-o"}, true, "invalid option -- 'o'"},
		{RC, []string{"a", "b"}, true, `more than one server name: ["a" "b"]`},
		{RC, []string{"-n", "ten"}, true, "-n ten: not a number"},
		{RC, []string{"--timeout=soon"}, true, "--timeout soon: not a duration"},
		{RC, []string{"--log-level=loud"}, true, "--log-level loud: not a log level (debug, info, warn or error)"},
		{RC, []string{"--gid"}, true, "option '--gid-idx' requires an argument"},
		{SRQ, []string{"-s", "0"}, true, "-s must be at least 1"},
		{SRQ, []string{"-q", "20", "-r", "10"}, false, "rx_depth 10 is too small for 20 QPs -- must have at least one receive per QP."},
		{SRQ, []string{"-q", "256", "-r", "500"}, false, "num_qp 256 must be less than 255"},
		{RC, []string{"-P"}, false, "prefetch is valid only with on-demand memory region"},
		{RC, []string{"-o", "-j"}, false, "DM memory region can't be on demand"},
	}
	for _, tc := range tests {
		_, err := ParseArgs(tc.kind, tc.args)
		if !assert.Error(t, err, "%s %q: no error", tc.kind.Name(), tc.args) {
			continue
		}
		assert.Equal(t, tc.usage, errors.Is(err, getopt.ErrUsage), "%s %q: error %q (usage %v), want %q (usage %v)", tc.kind.Name(), tc.args, err, errors.Is(err, getopt.ErrUsage), tc.msg, tc.usage)
		assert.True(t, strings.HasPrefix(err.Error(), tc.msg), "%s %q: error %q (usage %v), want %q (usage %v)", tc.kind.Name(), tc.args, err, errors.Is(err, getopt.ErrUsage), tc.msg, tc.usage)
	}
	_, err := ParseArgs(RC, []string{"--help"})
	assert.ErrorIs(t, err, tool.ErrHelp, "--help: %v", err)
}

func TestUsageMentionsEveryOption(t *testing.T) {
	for _, k := range []Kind{RC, UC, UD, SRQ} {
		var b bytes.Buffer
		Usage(&b, k)
		for _, f := range []string{"--port", "--ib-dev", "--ib-port", "--size", "--rx-depth", "--iters", "--sl",
			"--events", "--gid-idx", "--chk", "--bind", "--timeout", "--log-level", "--pcap", "--metrics", "--counters",
			"GORXE_ADDR", "GORXE_PORT", "GORXE_FAULTS"} {
			assert.Contains(t, b.String(), f, "%s usage lacks %s", k.Name(), f)
		}
		has := strings.Contains(b.String(), "--mtu")
		assert.NotEqual(t, bool((k == UD)), has, "%s usage: --mtu shown = %v", k.Name(), has)
		has = strings.Contains(b.String(), "--num-qp")
		assert.Equal(t, bool((k == SRQ)), has, "%s usage: --num-qp shown = %v", k.Name(), has)
	}
}

// A run that polls its CQ (no -e) opens its device in latency mode, so that its polls read the
// network; one that sleeps on completion events does not.
func TestSelection(t *testing.T) {
	o, err := ParseArgs(RC, []string{"-d", "gorxe_lo"})
	require.NoError(t, err)
	assert.Equal(t, "gorxe_lo", selection(&o).Device)
	assert.Equal(t, tool.LatencyBusyPoll, selection(&o).BusyPoll, "polling run")
	o, err = ParseArgs(RC, []string{"-e"})
	require.NoError(t, err)
	assert.Zero(t, selection(&o).BusyPoll, "run with -e")
}
