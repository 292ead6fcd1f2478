package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
	t.Run("c-server", func(t *testing.T) { runPingpong(t, []string{"ibv_rc_pingpong"}, goTool(t, "rc_pingpong")) })
	t.Run("go-server", func(t *testing.T) { runPingpong(t, goTool(t, "rc_pingpong"), []string{"ibv_rc_pingpong"}) })
}

// perftestIters keeps each perftest run to a few milliseconds of traffic: the tests check that
// the tools finish and report, not their figures.
const perftestIters = "200"

// TestPerftest runs each of perftest's bandwidth and latency tools on the library as two
// processes, and against gorxe's Go tool of the same test in both roles. The C tools load libmlx5
// and libefa, whose private-ABI imports and driver registration the library must satisfy, and
// take the plain verbs path on a device that is neither. Each side prints its result row (bytes,
// iterations, figures), except a read_lat server, which perftest leaves silent.
func TestPerftest(t *testing.T) {
	for _, tc := range []struct {
		test       string // perftest's ib_<test>, gorxe's <test>
		args       []string
		clientOnly bool // only the client reports
	}{
		{test: "write_bw"},
		{test: "read_bw"},
		{test: "send_bw", args: []string{"-s", "64"}},
		{test: "send_bw", args: []string{"-c", "UD", "-s", "1024"}},
		{test: "atomic_bw"},
		{test: "send_lat"},
		// Events: the program sleeps in ibv_get_cq_event, which runs the network (compwait.c).
		{test: "send_lat", args: []string{"-e"}},
		{test: "send_bw", args: []string{"-e", "-s", "64"}},
		{test: "write_lat"},
		{test: "read_lat", clientOnly: true},
	} {
		tool := "ib_" + tc.test
		t.Run(tool+strings.Join(tc.args, ""), func(t *testing.T) {
			needLibrary(t, tool)
			cmd := func(goSide bool) []string {
				if goSide {
					return goTool(t, tc.test)
				}
				return []string{tool}
			}
			for _, role := range []struct {
				name               string
				goServer, goClient bool
			}{{"c-c", false, false}, {"go-server", true, false}, {"go-client", false, true}} {
				t.Run(role.name, func(t *testing.T) {
					runPerftest(t, cmd(role.goServer), cmd(role.goClient), tc.clientOnly, tc.args...)
				})
			}
		})
	}
}

// runPerftest runs a perftest server and client, each a command line to which the options are
// appended, as two processes on two loopback addresses, and requires the result row of each (of
// the client only, with clientOnly).
func runPerftest(t *testing.T, server, client []string, clientOnly bool, extra ...string) {
	t.Helper()
	for try := 1; ; try++ {
		srvAddr, cliAddr := addressPair()
		port := freeTCPPort(t)
		args := append([]string{"-x", "1", "-n", perftestIters, "-p", port}, extra...)
		srv := start(t, srvAddr, server[0], append(server[1:], args...)...)
		waitListening(t, port, srv)
		cli := start(t, cliAddr, client[0], append(append(client[1:], args...), srvAddr)...)
		<-cli.done
		<-srv.done
		if try < perftestTries && (clockUncalibrated(cli) || clockUncalibrated(srv)) {
			t.Logf("perftest could not calibrate its clock on this loaded machine; running the pair again")
			continue
		}
		row := `(?m)^ \d+ +` + perftestIters + ` +[0-9]`
		for _, p := range []*proc{cli, srv} {
			out := p.wait(t)
			if p == srv && clientOnly {
				assert.NotRegexp(t, row, out, "%s: a result row:\n%s", p.name, out)
				continue
			}
			assert.Regexp(t, row, out, "%s: no result row:\n%s", p.name, out)
		}
		return
	}
}

// perftestTries bounds the runs of one perftest pair whose C side could not calibrate its clock.
const perftestTries = 3

// clockUncalibrated reports whether p, a C perftest tool, failed only to turn its cycle counts
// into times: perftest measures the CPU's cycle rate against gettimeofday before its report and
// gives up when the samples scatter (r^2 < 0.9), as they do on a loaded machine.
func clockUncalibrated(p *proc) bool {
	return p.runErr != nil && strings.Contains(p.err.String(), "Can't produce a report")
}
