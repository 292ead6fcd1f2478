package devinfo

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/loglevel"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
	"github.com/gorxe/gorxe/internal/fabrictest"
	"github.com/gorxe/gorxe/netio"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// testDevice opens a device on an in-memory network at a documentation address no interface has:
// its MAC, and so its GUIDs and link-local GID, derive from the address alone.
func testDevice(t *testing.T) *gorxe.Device {
	t.Helper()
	fab := netio.NewFabric(netio.FabricConfig{})
	t.Cleanup(fab.Close)
	return fabrictest.Devices(t, fab, fabrictest.Options{Config: gorxe.Config{Name: "gorxe_test0", MTU: gorxe.MTU1024}}, "198.51.100.7")[0]
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, want, got, "output differs from %s (go test -update rewrites it):\n%s", path, got)
}

func TestPrintGolden(t *testing.T) {
	dev := testDevice(t)
	for _, tc := range []struct {
		file    string
		port    int
		verbose bool
	}{{"devinfo.golden", 0, false}, {"devinfo-v.golden", 0, true}, {"devinfo-i1.golden", 1, false}} {
		var b bytes.Buffer
		require.NoError(t, Print(&b, dev, tc.port, tc.verbose))
		golden(t, tc.file, b.Bytes())
	}
}

// TestPrintLines pins the lines users grep for, independently of the golden files.
func TestPrintLines(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Print(&b, testDevice(t), 0, true))
	for _, line := range []string{
		"hca_id:\tgorxe_test0\n",
		"\ttransport:\t\t\tInfiniBand (0)\n",
		"\tphys_port_cnt:\t\t\t1\n",
		"\t\tport:\t1\n",
		"\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n",
		"\t\t\tmax_mtu:\t\t4096 (5)\n",
		"\t\t\tactive_mtu:\t\t1024 (3)\n",
		"\t\t\tlink_layer:\t\tEthernet\n",
		"\t\t\tGID[  1]:\t\t::ffff:198.51.100.7, RoCE v2\n",
	} {
		assert.Contains(t, b.String(), line, "output lacks %q", line)
	}
	assert.True(t, strings.HasSuffix(b.String(), "\t\t\tGID[  1]:\t\t::ffff:198.51.100.7, RoCE v2\n"+countersNote+"\n\n"),
		"a port's block does not end with its GID table, the counters' note and a blank line")
}

// TestCountersNote: devinfo's device is its own, so -v lists no counters of it, whose zeros would
// read as the traffic of the tools running beside it; it says where their counters are.
func TestCountersNote(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Run(Options{Bind: "127.0.0.1", Verbose: true}, &b, io.Discard))
	out := b.String()
	assert.Contains(t, out, "\n\t\t\tcounters:\t\tnot in this process: a gorxe device counts in the process that uses it; "+
		"start that tool with --counters (printed when it ends) or --metrics ADDR (then gorxe stats ADDR)\n")
	assert.Equal(t, 1, strings.Count(out, "counters:"))
	for _, name := range []string{"sent_pkts", "rcvd_pkts", "sent_bytes"} {
		assert.NotContains(t, out, name)
	}

	b.Reset()
	require.NoError(t, Run(Options{Bind: "127.0.0.1"}, &b, io.Discard))
	assert.NotContains(t, b.String(), "counters:", "only -v says where the counters are")

	var usage bytes.Buffer
	Usage(&usage)
	assert.Contains(t, usage.String(), "shows a device of its own, which opens no socket, and no counters")
}

func TestPrintBadPort(t *testing.T) {
	err := Print(&bytes.Buffer{}, testDevice(t), 2, false)
	assert.False(t, err == nil || err.Error() != "Invalid port requested for device", "port 2: %v", err)
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args []string
		want Options
	}{
		{nil, Options{}},
		{[]string{"-v"}, Options{Verbose: true}},
		{[]string{"-l"}, Options{List: true}},
		{[]string{"-d", "eth0", "-i", "1"}, Options{IBDev: "eth0", IBPort: 1}},
		{[]string{"--ib-dev=gorxe_lo", "--ib-port=1", "--verbose"}, Options{IBDev: "gorxe_lo", IBPort: 1, Verbose: true}},
		{[]string{"-vd", "lo"}, Options{IBDev: "lo", Verbose: true}},
		{[]string{"--bind", "127.0.0.1"}, Options{Bind: "127.0.0.1"}},
		{[]string{"--log-level", "debug"}, Options{LogLevel: slog.LevelDebug}},
	}
	for _, tc := range tests {
		if tc.args == nil || tc.args[0] != "--log-level" {
			tc.want.LogLevel = loglevel.Default
		}
		got, err := ParseArgs(tc.args)
		assert.NoError(t, err, "ParseArgs(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
		assert.Equal(t, tc.want, got, "ParseArgs(%q) = %+v, %v; want %+v", tc.args, got, err, tc.want)
	}
	for _, bad := range [][]string{{"-i", "0"}, {"-x"}, {"extra"}, {"-d"}, {"--log-level=loud"}} {
		_, err := ParseArgs(bad)
		assert.ErrorIs(t, err, getopt.ErrUsage, "ParseArgs(%q) = %v, want a usage error", bad, err)
	}
	_, err := ParseArgs([]string{"-h"})
	assert.ErrorIs(t, err, tool.ErrHelp, "-h: %v", err)
}

func TestRun(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Run(Options{List: true}, &b, io.Discard))
	names := devselect.DeviceNames()
	assert.Contains(t, b.String(), " found:\n", "-l output:\n%s", b.String())
	assert.Equal(t, len(names), strings.Count(b.String(), "\tgorxe_"), "-l output:\n%s", b.String())
	b.Reset()
	require.NoError(t, Run(Options{Bind: "127.0.0.1"}, &b, io.Discard))
	assert.True(t, strings.HasPrefix(b.String(), "hca_id:\tgorxe_127.0.0.1\n"), "--bind 127.0.0.1:\n%s", b.String())
	err := Run(Options{IBDev: "rxe9x"}, &b, io.Discard)
	assert.False(t, err == nil || err.Error() != "IB device 'rxe9x' wasn't found", "-d rxe9x: %v", err)
}
