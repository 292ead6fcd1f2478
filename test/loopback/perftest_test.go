package loopback

import (
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolRun is one server and one client of a perftest tool, run to completion.
// runPerftest starts the tool's server on one loopback address and its client on another, with
// the same extra arguments, and waits for both to exit successfully.
func runPerftest(t *testing.T, tool string, args ...string) toolRun {
	t.Helper()
	return runPair(t, "Waiting for client to connect", tool, args...)
}

var (
	ptAddrLine = regexp.MustCompile(`^ (local|remote) address: LID 0000 QPN (0x[0-9a-f]{4,6}) PSN (0x[0-9a-f]{1,6})( OUT 0x[0-9a-f]+)?( RKey 0x[0-9a-f]+ VAddr 0x[0-9a-f]{14})?$`)
	ptGIDLine  = regexp.MustCompile(`^ GID: (\d{2,3}(:\d{2,3}){15})$`)
	ptDashes   = strings.Repeat("-", 87)
)

// ptSide is what one side printed.
type ptSide struct {
	title          string
	local, remote  []string // "QPN PSN" of each address line
	gids           []string // GID lines, local then remote
	results        [][]string
	header, footer bool
}

// parsePerftest checks the structure of a perftest tool's output and extracts its parts.
func parsePerftest(t *testing.T, who, out string) ptSide {
	t.Helper()
	var s ptSide
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	inResults := false
	for i, l := range lines {
		switch {
		case l == ptDashes:
			if inResults {
				s.footer = true
			}
		case strings.HasSuffix(l, " Test") && strings.HasPrefix(l, strings.Repeat(" ", 20)):
			s.title = strings.TrimSpace(l)
		case strings.HasPrefix(l, " #bytes"):
			s.header, inResults = true, true
			assert.False(t, i == 0 || lines[i-1] != ptDashes, "%s: no dashes above the result header", who)
		case inResults && strings.HasPrefix(l, " "):
			s.results = append(s.results, strings.Fields(l))
		case ptAddrLine.MatchString(l):
			m := ptAddrLine.FindStringSubmatch(l)
			if m[1] == "local" {
				s.local = append(s.local, m[2]+" "+m[3])
			} else {
				s.remote = append(s.remote, m[2]+" "+m[3])
			}
		case ptGIDLine.MatchString(l):
			s.gids = append(s.gids, ptGIDLine.FindStringSubmatch(l)[1])
		case strings.Contains(l, "address:"), strings.HasPrefix(l, " GID:"):
			assert.Fail(t, fmt.Sprintf("%s: malformed address line %q", who, l))
		}
	}
	assert.NotEqual(t, "", s.title, "%s: no test title in:\n%s", who, out)
	return s
}

// decimalGID is how perftest prints the GID of an IPv4 address: every byte in decimal.
func decimalGID(addr string) string {
	ip := net.ParseIP(addr).To16()
	parts := make([]string, 16)
	for i, b := range ip {
		parts[i] = fmt.Sprintf("%02d", b)
	}
	return strings.Join(parts, ":")
}

// checkPerftest verifies that each side printed the title, saw the other's QPs and GIDs, and reported
// the expected size and iteration count (where the side reports).
func (r toolRun) checkPerftest(t *testing.T, title string, qps int, size string, iters string, serverReports bool) {
	t.Helper()
	srv := parsePerftest(t, "server", r.server.Stdout())
	cli := parsePerftest(t, "client", r.client.Stdout())
	for who, s := range map[string]ptSide{"server": srv, "client": cli} {
		assert.Equal(t, title, s.title, "%s: title %q, want %q", who, s.title, title)
		assert.Len(t, s.local, qps, "%s: %d local, %d remote addresses, %d GIDs; want %d QPs", who, len(s.local), len(s.remote), len(s.gids), qps)
		assert.Len(t, s.remote, qps, "%s: %d local, %d remote addresses, %d GIDs; want %d QPs", who, len(s.local), len(s.remote), len(s.gids), qps)
		assert.Len(t, s.gids, 2*qps, "%s: %d local, %d remote addresses, %d GIDs; want %d QPs", who, len(s.local), len(s.remote), len(s.gids), qps)
	}
	assert.Equal(t, fmt.Sprint(cli.remote), fmt.Sprint(srv.local), "addresses disagree: server %v/%v, client %v/%v", srv.local, srv.remote, cli.local, cli.remote)
	assert.Equal(t, fmt.Sprint(srv.remote), fmt.Sprint(cli.local), "addresses disagree: server %v/%v, client %v/%v", srv.local, srv.remote, cli.local, cli.remote)
	if len(srv.gids) > 0 && len(cli.gids) > 0 && (srv.gids[0] != decimalGID(r.srvAddr) || cli.gids[0] != decimalGID(r.cliAddr)) {
		assert.Fail(t, fmt.Sprintf("GIDs %s and %s, want the bound addresses %s and %s", srv.gids[0], cli.gids[0], r.srvAddr, r.cliAddr))
	}
	assert.False(t, len(cli.results) != 1 || cli.results[0][0] != size || cli.results[0][1] != iters, "client results %v, want size %s and %s iterations\n%s", cli.results, size, iters, r.client.Stdout())
	assert.True(t, cli.footer, "client results %v, want size %s and %s iterations\n%s", cli.results, size, iters, r.client.Stdout())
	assert.False(t, serverReports && (len(srv.results) != 1 || srv.results[0][0] != size || srv.results[0][1] != iters), "server results %v, want size %s and %s iterations\n%s", srv.results, size, iters, r.server.Stdout())
	assert.False(t, !serverReports && len(srv.results) != 0, "server printed results %v", srv.results)
}

func TestPerftestBandwidth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, title string
		args        []string
		qps         int
		size, iters string
	}{
		{"write_bw", "RDMA_Write BW Test", []string{"-n", "200", "-s", "8192"}, 1, "8192", "200"},
		{"write_bw", "RDMA_Write BW Test", []string{"-n", "50", "-s", "1024", "-q", "2", "-c", "UC"}, 2, "1024", "100"},
		{"read_bw", "RDMA_Read BW Test", []string{"-n", "100", "-s", "16384"}, 1, "16384", "100"},
		{"send_bw", "Send BW Test", []string{"-n", "200", "-s", "4096"}, 1, "4096", "200"},
		{"send_bw", "Send BW Test", []string{"-n", "100", "-s", "2048", "-c", "UC"}, 1, "2048", "100"},
		{"send_bw", "Send BW Test", []string{"-n", "100", "-s", "1024", "-c", "UD", "-x", "1"}, 1, "1024", "100"},
		{"atomic_bw", "Atomic FETCH_AND_ADD BW Test", []string{"-n", "200"}, 1, "8", "200"},
		{"atomic_bw", "Atomic CMP_AND_SWAP BW Test", []string{"-n", "100", "-A", "CMP_AND_SWAP", "--report_gbits"}, 1, "8", "100"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := runPerftest(t, tt.tool, tt.args...)
			r.checkPerftest(t, tt.title, tt.qps, tt.size, tt.iters, true)
		})
	}
}

func TestPerftestLatency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, title string
		args        []string
		size        string
		// serverReports: in ib_read_lat and ib_atomic_lat only the client measures.
		serverReports bool
	}{
		{"write_lat", "RDMA_Write Latency Test", []string{"-n", "200"}, "2", true},
		{"write_lat", "RDMA_Write Latency Test", []string{"-n", "100", "-s", "4096", "-c", "UC"}, "4096", true},
		{"read_lat", "RDMA_Read Latency Test", []string{"-n", "200", "-s", "64"}, "64", false},
		{"send_lat", "Send Latency Test", []string{"-n", "200", "-s", "64"}, "64", true},
		{"send_lat", "Send Latency Test", []string{"-n", "100", "-s", "512", "-c", "UD"}, "512", true},
		{"send_lat", "Send Latency Test", []string{"-n", "100", "-c", "UC", "-e"}, "2", true},
		{"atomic_lat", "Atomic FETCH_AND_ADD Latency Test", []string{"-n", "200"}, "8", false},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := runPerftest(t, tt.tool, tt.args...)
			r.checkPerftest(t, tt.title, 1, tt.size, tt.args[1], tt.serverReports)
		})
	}
}

// The two sides agree on the smaller MTU, and a UD test shrinks its messages to it.
func TestPerftestMTU(t *testing.T) {
	t.Parallel()
	srvAddr, cliAddr := LoopbackPair(t)
	port := FreeTCPPort(t)
	server := Start(t, nil, "send_bw", "-p", port, "-n", "50", "-c", "UD", "--bind", srvAddr)
	server.WaitLine("Waiting for client to connect", 10*time.Second)
	client := Start(t, nil, "send_bw", "-p", port, "-n", "50", "-c", "UD", "-m", "1024", "--bind", cliAddr, srvAddr)
	for _, p := range []*Proc{client, server} {
		if code := p.Wait(20 * time.Second); code != 0 {
			require.Fail(t, fmt.Sprintf("%s: status %d\n%s\n%s", p.name, code, p.Stdout(), p.Stderr()))
		}
		assert.Contains(t, p.Stdout(), " Mtu             : 1024[B]", "%s:\n%s\n%s", p.name, p.Stdout(), p.Stderr())
		assert.Contains(t, p.Stderr(), "Max msg size in UD is MTU 1024", "%s:\n%s\n%s", p.name, p.Stdout(), p.Stderr())
		if res := parsePerftest(t, p.name, p.Stdout()).results; len(res) != 1 || res[0][0] != "1024" {
			assert.Fail(t, fmt.Sprintf("%s: results %v", p.name, res))
		}
	}
}

func TestPerftestErrors(t *testing.T) {
	t.Parallel()
	oneLine := func(t *testing.T, p *Proc, want string) {
		t.Helper()
		code := p.Wait(15 * time.Second)
		assert.Equal(t, 1, code, "exit status %d, want 1", code)
		lines := strings.Split(strings.TrimSuffix(p.Stderr(), "\n"), "\n")
		last := lines[len(lines)-1]
		assert.Contains(t, last, want, "stderr %q, want a last line containing %q", p.Stderr(), want)
		assert.True(t, strings.HasPrefix(last, "gorxe "), "stderr %q, want a last line containing %q", p.Stderr(), want)
	}
	// silentServer accepts one connection, writes what it is given and then reads until the client
	// gives up.
	silentServer := func(t *testing.T, greeting []byte) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		go func() {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			_, _ = c.Write(greeting)
			_, _ = io.Copy(io.Discard, c)
		}()
		return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	}
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		_, cli := LoopbackPair(t)
		p := Start(t, nil, "write_bw", "--bind", cli, "-p", FreeTCPPort(t), "127.0.0.1")
		oneLine(t, p, "connection refused")
	})
	t.Run("unknown device", func(t *testing.T) {
		t.Parallel()
		p := Start(t, nil, "read_lat", "-d", "rxe0x", "127.0.0.1")
		oneLine(t, p, "IB device rxe0x not found")
	})
	t.Run("silent peer", func(t *testing.T) {
		t.Parallel()
		_, cli := LoopbackPair(t)
		port := silentServer(t, nil)
		p := Start(t, nil, "send_bw", "--bind", cli, "-p", port, "--timeout", "300ms", "127.0.0.1")
		oneLine(t, p, "couldn't read remote version (127.0.0.1:"+port+"): timed out after 300ms")
	})
	t.Run("pingpong peer", func(t *testing.T) {
		t.Parallel()
		_, cli := LoopbackPair(t)
		// What an ibv_rc_pingpong server would answer: its 52-byte address message.
		port := silentServer(t, []byte("0000:000011:5dc87b:00000000000000000000ffff0a630002\x00"))
		p := Start(t, nil, "write_lat", "--bind", cli, "-p", port, "127.0.0.1")
		oneLine(t, p, `version "0000:000011:5dc8" is not a perftest version (a different tool on the other side?)`)
	})
	t.Run("old perftest", func(t *testing.T) {
		t.Parallel()
		_, cli := LoopbackPair(t)
		port := silentServer(t, append([]byte("5.60"), make([]byte, 12)...))
		p := Start(t, nil, "write_bw", "--bind", cli, "-p", port, "127.0.0.1")
		oneLine(t, p, "the peer runs perftest 5.60; versions older than 5.70 are not supported")
	})
	t.Run("different tests", func(t *testing.T) {
		t.Parallel()
		// write_bw against a send_bw server: the exchanges get out of step and both sides fail,
		// neither hangs.
		srv, cli := LoopbackPair(t)
		port := FreeTCPPort(t)
		s := Start(t, nil, "send_bw", "--bind", srv, "-p", port, "-n", "20", "--timeout", "2s")
		s.WaitLine("Waiting for client to connect", 10*time.Second)
		c := Start(t, nil, "write_bw", "--bind", cli, "-p", port, "-n", "20", "--timeout", "2s", srv)
		for _, p := range []*Proc{c, s} {
			if code := p.Wait(15 * time.Second); code == 0 {
				assert.Fail(t, fmt.Sprintf("%s succeeded:\n%s", p.name, p.Stdout()))
			}
		}
	})
	t.Run("peer vanishes mid-run", func(t *testing.T) {
		t.Parallel()
		srv, cli := LoopbackPair(t)
		port := FreeTCPPort(t)
		s := Start(t, nil, "write_lat", "--bind", srv, "-p", port, "-n", "100000000", "--timeout", "500ms")
		s.WaitLine("Waiting for client to connect", 10*time.Second)
		c := Start(t, nil, "write_lat", "--bind", cli, "-p", port, "-n", "100000000", srv)
		c.WaitLine("#bytes", 10*time.Second)
		s.WaitLine("#bytes", 10*time.Second)
		time.Sleep(100 * time.Millisecond)
		c.Kill()
		oneLine(t, s, "for 500ms: is the peer still there?")
	})
	t.Run("interrupted", func(t *testing.T) {
		t.Parallel()
		// Ctrl-C on the client in the middle of the measurement: it says how far it got and exits
		// 130; its server, told by the hang-up, ends at once and points at the client's output.
		srv, cli := LoopbackPair(t)
		port := FreeTCPPort(t)
		s := Start(t, nil, "write_bw", "--bind", srv, "-p", port, "-n", "100000000", "-s", "64")
		s.WaitLine("Waiting for client to connect", 10*time.Second)
		c := Start(t, nil, "write_bw", "--bind", cli, "-p", port, "-n", "100000000", "-s", "64", srv)
		c.WaitLine("#bytes", 10*time.Second)
		c.Interrupt()
		assert.Equal(t, 130, c.Wait(15*time.Second))
		assert.Regexp(t, `^gorxe write_bw: interrupted after \d+ of 100000000 messages\n$`, c.Stderr())
		oneLine(t, s, "peer closed the connection after 0 of 108 bytes (the peer stopped the test early; its output says why)")
	})
	t.Run("rdma_cm nobody", func(t *testing.T) {
		t.Parallel()
		// -R towards an address where no RDMA-CM agent answers: the REQ goes unanswered.
		_, cli := LoopbackPair(t)
		srv, _ := LoopbackPair(t)
		p := Start(t, nil, "write_bw", "-R", "--bind", cli, "--timeout", "300ms", srv)
		oneLine(t, p, "Unable to perform rdma_client function ("+srv+":18515): timed out after 300ms")
	})
}

// TestPerftestHelp checks that every tool documents its options and prints its version.
func TestPerftestHelp(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"write_bw", "read_bw", "send_bw", "atomic_bw", "write_lat", "read_lat", "send_lat", "atomic_lat"} {
		p := Start(t, nil, tool, "--help")
		code := p.Wait(10 * time.Second)
		require.Equal(t, 0, code, "%s --help: status %d", tool, code)
		out := p.Stdout()
		assert.Contains(t, out, fmt.Sprintf("gorxe %s <host>", tool), "%s --help:\n%s", tool, out)
		p = Start(t, nil, tool, "-V")
		code = p.Wait(10 * time.Second)
		assert.Equal(t, 0, code, "%s -V: status %d, %q", tool, code, p.Stdout())
		assert.Equal(t, "Version: 6.00\n", p.Stdout(), "%s -V: status %d, %q", tool, code, p.Stdout())
	}
}

// TestPerftestIPv6 runs ib_send_lat and ib_write_bw peers over IPv6 GIDs: an interface's
// link-local address against another of its addresses, each side picking its GID with --ipv6, on
// a private UDP port.
func TestPerftestIPv6(t *testing.T) {
	t.Parallel()
	ll, other, env := linkLocalHost(t)
	for _, tool := range []string{"send_lat", "write_bw"} {
		port := FreeTCPPort(t)
		server := Start(t, env, tool, "--bind", ll.String(), "--ipv6", "-p", port, "-n", "20")
		server.WaitLine("Waiting for client to connect", 10*time.Second)
		client := Start(t, env, tool, "--bind", other.String(), "--ipv6", "-p", port, "-n", "20", "::1")
		for _, p := range []*Proc{client, server} {
			if code := p.Wait(20 * time.Second); code != 0 {
				require.Fail(t, fmt.Sprintf("%s: status %d\n%s%s", p.name, code, p.Stdout(), p.Stderr()))
			}
		}
		srv := parsePerftest(t, "server", server.Stdout())
		cli := parsePerftest(t, "client", client.Stdout())
		assert.False(t, len(srv.gids) != 2 || len(cli.gids) != 2 || srv.gids[0] != cli.gids[1] || cli.gids[0] != srv.gids[1] ||
			srv.gids[0] != decimalGID(ll.WithZone("").String()) || cli.gids[0] != decimalGID(other.String()), "%s: GIDs server %v client %v", tool, srv.gids, cli.gids)
		assert.False(t, len(cli.results) != 1 || cli.results[0][1] != "20", "%s: client results %v", tool, cli.results)
	}
}

// TestPerftestFaultNote: with GORXE_FAULTS set, each side says so before the run and what the
// faults did after it, on stderr, leaving perftest's output on stdout as it is.
func TestPerftestFaultNote(t *testing.T) {
	t.Parallel()
	env := []string{"GORXE_FAULTS=dup=0.05,seed=9"}
	srv, cli := LoopbackPair(t)
	port := FreeTCPPort(t)
	s := Start(t, env, "send_bw", "--bind", srv, "-p", port, "-n", "100")
	s.WaitLine("Waiting for client to connect", 10*time.Second)
	c := Start(t, env, "send_bw", "--bind", cli, "-p", port, "-n", "100", srv)
	for _, p := range []*Proc{c, s} {
		require.Equal(t, 0, p.Wait(20*time.Second), "%s:\n%s", p.name, p.Stderr())
		assert.Regexp(t, `^GORXE_FAULTS=dup=0.05,seed=9: this side impairs its outgoing datagrams on purpose\n`+
			`GORXE_FAULTS: 0 of \d+ datagrams dropped by the faults; \d+ retransmissions, \d+ duplicate and \d+ out-of-sequence requests received, \d+ received packets dropped\n$`, p.Stderr())
		assert.NotContains(t, p.Stdout(), "GORXE_FAULTS")
	}
}
