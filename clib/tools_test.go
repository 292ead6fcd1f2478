package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDevinfo runs the distribution's ibv_devinfo on the library: the device GORXE_ADDR names,
// its port and, with -v, its GID table laid out as rxe's (index 1 the IPv4 address, RoCE v2).
func TestDevinfo(t *testing.T) {
	needLibrary(t, "ibv_devinfo")
	addr, _ := addressPair()
	out := start(t, addr, "ibv_devinfo").wait(t)
	assert.Contains(t, out, "hca_id:\tgorxe_"+addr+"\n")
	assert.Contains(t, out, "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n")
	assert.Contains(t, out, "\t\t\tlink_layer:\t\tEthernet\n")
	out = start(t, addr, "ibv_devinfo", "-v").wait(t)
	assert.Contains(t, out, "\t\t\tGID[  1]:\t\t::ffff:"+addr+", RoCE v2\n")
	assert.Contains(t, out, "\t\t\tgid_tbl_len:\t\t1024\n")
	assert.Contains(t, out, "\tmax_qp_wr:\t\t\t1048576\n")
}

// pingpongIters keeps each exchange short: the tests check that the programs run and verify
// their data, not their speed.
const pingpongIters = "50"

// runPingpong runs a pingpong server and client as two processes on two loopback addresses, each
// either the distribution's C tool on the library (a command name) or gorxe's Go tool (gorxe
// and its subcommand), and requires both to finish their iterations.
func runPingpong(t *testing.T, server, client []string, extra ...string) {
	t.Helper()
	srvAddr, cliAddr := addressPair()
	port := freeTCPPort(t)
	args := append([]string{"-g", "1", "-n", pingpongIters, "-p", port}, extra...)
	srv := start(t, srvAddr, server[0], append(server[1:], args...)...)
	waitListening(t, port, srv)
	cli := start(t, cliAddr, client[0], append(append(client[1:], args...), srvAddr)...)
	for _, p := range []*proc{cli, srv} {
		out := p.wait(t)
		assert.Contains(t, out, pingpongIters+" iters in ", "%s:\n%s", p.name, out)
	}
}

// TestPingpongs runs the distribution's unmodified pingpong tools against each other on the
// library: RC, UC, UD and SRQ, busy-polling and, for RC, waiting on the completion channel (-e)
// and posting with the ibv_wr_* calls of an extended QP (-N).
func TestPingpongs(t *testing.T) {
	for _, tc := range []struct {
		name, tool string
		extra      []string
	}{
		{"rc", "ibv_rc_pingpong", nil},
		{"rc-events", "ibv_rc_pingpong", []string{"-e"}},
		{"rc-new-send", "ibv_rc_pingpong", []string{"-N"}}, // ibv_create_qp_ex and ibv_wr_*
		{"uc", "ibv_uc_pingpong", nil},
		{"ud", "ibv_ud_pingpong", nil},
		{"srq", "ibv_srq_pingpong", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needLibrary(t, tc.tool)
			runPingpong(t, []string{tc.tool}, []string{tc.tool}, tc.extra...)
		})
	}
}

// TestPingpongAgainstGoTool runs ibv_rc_pingpong on the library against gorxe's Go rc_pingpong,
// in both roles.
func TestPingpongAgainstGoTool(t *testing.T) {
	needLibrary(t, "ibv_rc_pingpong")
	gorxeBin := filepath.Join(tmpRoot, "gorxe")
	out, err := exec.Command("go", "build", "-o", gorxeBin, "github.com/gorxe/gorxe/cmd/gorxe").CombinedOutput()
	require.NoError(t, err, "building gorxe: %s", out)
	goTool := []string{gorxeBin, "rc_pingpong"}
	t.Run("c-server", func(t *testing.T) { runPingpong(t, []string{"ibv_rc_pingpong"}, goTool) })
	t.Run("go-server", func(t *testing.T) { runPingpong(t, goTool, []string{"ibv_rc_pingpong"}) })
}

// TestPerftest runs perftest's bandwidth tools on the library as two processes: they load
// libmlx5 and libefa, whose private-ABI imports and driver registration the library must
// satisfy, and take the plain verbs path on a device that is neither.
func TestPerftest(t *testing.T) {
	for _, tc := range []struct {
		tool string
		args []string
	}{
		{"ib_write_bw", nil},
		{"ib_send_bw", []string{"-s", "64"}},
		{"ib_send_bw", []string{"-c", "UD", "-s", "1024"}},
	} {
		t.Run(tc.tool+strings.Join(tc.args, ""), func(t *testing.T) {
			needLibrary(t, tc.tool)
			srvAddr, cliAddr := addressPair()
			port := freeTCPPort(t)
			args := append([]string{"-x", "1", "-n", "200", "-p", port}, tc.args...)
			srv := start(t, srvAddr, tc.tool, args...)
			waitListening(t, port, srv)
			cli := start(t, cliAddr, tc.tool, append(args, srvAddr)...)
			for _, p := range []*proc{cli, srv} {
				out := p.wait(t)
				assert.Regexp(t, `(?m)^ \d+ +200 +`, out, "%s: no result row:\n%s", p.name, out)
			}
		})
	}
}
