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

// toolRun is one server and one client of a pingpong tool, run to completion.
// runPingpong starts the tool's server on one loopback address and its client on another, with
// the same extra arguments, and waits for both to exit.
func runPingpong(t *testing.T, tool string, args ...string) toolRun {
	t.Helper()
	return runPair(t, "local address:", tool, args...)
}

var (
	addrLine = regexp.MustCompile(`^  (local address: |remote address:) LID 0x0000, QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6})([,:]) GID (\S+)$`)
	bytesRE  = regexp.MustCompile(`^(\d+) bytes in \d+\.\d\d seconds = \d+\.\d\d Mbit/sec$`)
	itersRE  = regexp.MustCompile(`^(\d+) iters in \d+\.\d\d seconds = \d+\.\d\d usec/iter$`)
)

type addr struct{ qpn, psn, gid string }

// parseOutput checks every stdout line of a pingpong process and returns its local and remote
// addresses.
func parseOutput(t *testing.T, who, out string, size, iters int, udLocal bool) (local, remote []addr) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.GreaterOrEqual(t, len(lines), 4, "%s: output too short:\n%s", who, out)
	for _, l := range lines[:len(lines)-2] {
		m := addrLine.FindStringSubmatch(l)
		require.NotNil(t, m, "%s: unexpected line %q", who, l)
		a := addr{m[2], m[3], m[5]}
		if m[1] == "local address: " {
			wantSep := map[bool]string{true: ":", false: ","}[udLocal]
			assert.Equal(t, wantSep, m[4], "%s: %q: separator before GID is %q, want %q", who, l, m[4], wantSep)
			local = append(local, a)
		} else {
			assert.Equal(t, ",", m[4], "%s: %q: separator before GID is %q", who, l, m[4])
			remote = append(remote, a)
		}
	}
	if m := bytesRE.FindStringSubmatch(lines[len(lines)-2]); m == nil || m[1] != strconv.Itoa(size*iters*2) {
		assert.Fail(t, fmt.Sprintf("%s: summary line %q, want %d bytes", who, lines[len(lines)-2], size*iters*2))
	}
	if m := itersRE.FindStringSubmatch(lines[len(lines)-1]); m == nil || m[1] != strconv.Itoa(iters) {
		assert.Fail(t, fmt.Sprintf("%s: summary line %q, want %d iters", who, lines[len(lines)-1], iters))
	}
	return local, remote
}

// checkPingpong verifies both sides' output: each saw the other's addresses, with the GIDs of their
// bound addresses.
func (r toolRun) checkPingpong(t *testing.T, size, iters, qps int, ud bool) {
	t.Helper()
	sl, sr := parseOutput(t, "server", r.server.Stdout(), size, iters, ud)
	cl, cr := parseOutput(t, "client", r.client.Stdout(), size, iters, ud)
	require.Len(t, sl, qps, "address lines: server %d/%d, client %d/%d, want %d each", len(sl), len(sr), len(cl), len(cr), qps)
	require.Len(t, sr, qps, "address lines: server %d/%d, client %d/%d, want %d each", len(sl), len(sr), len(cl), len(cr), qps)
	require.Len(t, cl, qps, "address lines: server %d/%d, client %d/%d, want %d each", len(sl), len(sr), len(cl), len(cr), qps)
	require.Len(t, cr, qps, "address lines: server %d/%d, client %d/%d, want %d each", len(sl), len(sr), len(cl), len(cr), qps)
	for i := range qps {
		if sl[i] != cr[i] || cl[i] != sr[i] {
			assert.Fail(t, fmt.Sprintf("QP %d: server local %v remote %v, client local %v remote %v", i, sl[i], sr[i], cl[i], cr[i]))
		}
		if sl[i].gid != "::ffff:"+r.srvAddr || cl[i].gid != "::ffff:"+r.cliAddr {
			assert.Fail(t, fmt.Sprintf("QP %d: GIDs %s and %s, want the bound addresses", i, sl[i].gid, cl[i].gid))
		}
	}
}

func TestRCPingpong(t *testing.T) {
	t.Parallel()
	// 10000 bytes at the default path MTU of 1024: ten packets a message, the last one short.
	r := runPingpong(t, "rc_pingpong", "-g", "1", "-n", "50", "-s", "10000", "-c")
	r.checkPingpong(t, 10000, 50, 1, false)
	assert.NotContains(t, r.server.Stdout(), "invalid data", "server found invalid data:\n%s", r.server.Stdout())
}

func TestRCPingpongEvents(t *testing.T) {
	t.Parallel()
	r := runPingpong(t, "rc_pingpong", "-g", "1", "-n", "50", "-s", "64", "-e", "-m", "4096", "-r", "4")
	r.checkPingpong(t, 64, 50, 1, false)
}

func TestUCPingpong(t *testing.T) {
	t.Parallel()
	r := runPingpong(t, "uc_pingpong", "-g", "1", "-n", "50", "-s", "2048", "-c")
	r.checkPingpong(t, 2048, 50, 1, false)
}

func TestUDPingpong(t *testing.T) {
	t.Parallel()
	r := runPingpong(t, "ud_pingpong", "-g", "1", "-n", "50", "-c")
	r.checkPingpong(t, 1024, 50, 1, true)
	assert.NotContains(t, r.server.Stdout(), "invalid data", "server found invalid data:\n%s", r.server.Stdout())
}

func TestSRQPingpong(t *testing.T) {
	t.Parallel()
	r := runPingpong(t, "srq_pingpong", "-g", "1", "-n", "64", "-q", "4", "-r", "16", "-s", "1500", "-c")
	r.checkPingpong(t, 1500, 64, 4, false)
}

// TestPingpongErrors checks that each failure ends the process quickly with status 1 and one
// line on stderr naming the cause.
func TestPingpongErrors(t *testing.T) {
	t.Parallel()
	oneLine := func(t *testing.T, p *Proc, want string) {
		t.Helper()
		code := p.Wait(15 * time.Second)
		assert.Equal(t, 1, code, "exit status %d, want 1", code)
		errText := p.Stderr()
		assert.Equal(t, 1, strings.Count(errText, "\n"), "stderr %q, want one line containing %q", errText, want)
		assert.Contains(t, errText, want, "stderr %q, want one line containing %q", errText, want)
	}
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		_, cli := LoopbackPair(t)
		p := Start(t, nil, "rc_pingpong", "--bind", cli, "-g", "1", "-p", FreeTCPPort(t), "127.0.0.1")
		oneLine(t, p, "connection refused")
	})
	t.Run("unknown host", func(t *testing.T) {
		t.Parallel()
		_, cli := LoopbackPair(t)
		p := Start(t, nil, "uc_pingpong", "--bind", cli, "-g", "1", "no-such-host.invalid")
		oneLine(t, p, "Couldn't connect to no-such-host.invalid:18515")
	})
	t.Run("unknown device", func(t *testing.T) {
		t.Parallel()
		p := Start(t, nil, "rc_pingpong", "-d", "rxe0x", "-g", "1", "127.0.0.1")
		oneLine(t, p, "IB device rxe0x not found")
	})
	t.Run("other protocol", func(t *testing.T) {
		t.Parallel()
		// A perftest-style server: it sends 16 bytes and waits for 16.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		go func() {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			_, _ = c.Write([]byte("0000000000000006"))
			_, _ = io.Copy(io.Discard, c) // until the client gives up

		}()
		_, cli := LoopbackPair(t)
		port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		p := Start(t, nil, "rc_pingpong", "--bind", cli, "-g", "1", "-p", port, "--timeout", "300ms", "127.0.0.1")
		oneLine(t, p, "Couldn't read remote address (127.0.0.1:"+port+"): timed out after 300ms with 16 of 52 bytes received")
	})
	t.Run("no gid", func(t *testing.T) {
		t.Parallel()
		srv, cli := LoopbackPair(t)
		port := FreeTCPPort(t)
		s := Start(t, nil, "rc_pingpong", "--bind", srv, "-p", port)
		s.WaitLine("local address:", 10*time.Second)
		c := Start(t, nil, "rc_pingpong", "--bind", cli, "-p", port, srv)
		oneLine(t, s, "RoCE needs a GRH: give both sides -g")
		oneLine(t, c, "peer closed the connection after 0 of 52 bytes (the server refused this side's address: without -g it has no GID, and RoCE needs one; give both sides -g, e.g. -g 1)")
	})
	t.Run("address taken", func(t *testing.T) {
		t.Parallel()
		// Two tools on one address, as two tools without --bind on one host are.
		srv, _ := LoopbackPair(t)
		s := Start(t, nil, "rc_pingpong", "--bind", srv, "-g", "1", "-p", FreeTCPPort(t))
		s.WaitLine("local address:", 10*time.Second)
		second := Start(t, nil, "rc_pingpong", "--bind", srv, "-g", "1", "-p", FreeTCPPort(t))
		oneLine(t, second, "bind: address already in use (UDP port 4791 of that address is taken, by another gorxe tool or another RoCE stack on this host: give each tool its own address with --bind ADDR")
		s.Kill()
	})
	t.Run("peer vanishes mid-run", func(t *testing.T) {
		t.Parallel()
		srv, cli := LoopbackPair(t)
		port := FreeTCPPort(t)
		s := Start(t, nil, "uc_pingpong", "--bind", srv, "-p", port, "-g", "1", "-n", "100000000", "--timeout", "500ms")
		s.WaitLine("local address:", 10*time.Second)
		c := Start(t, nil, "uc_pingpong", "--bind", cli, "-p", port, "-g", "1", "-n", "100000000", srv)
		c.WaitLine("remote address:", 10*time.Second)
		s.WaitLine("remote address:", 10*time.Second)
		c.Kill()
		oneLine(t, s, "no completion for 500ms after")
	})
	t.Run("RC peer killed mid-run", func(t *testing.T) {
		t.Parallel()
		// The client sends first. If the server dies with a send of the client unacknowledged,
		// that send exhausts its retries and the QP goes to the error state, which the device
		// logs only at --log-level=warn; if the server acknowledged it and died before replying,
		// the client has nothing in flight and its watchdog ends the run. Either failure is the
		// one line.
		srv, cli := LoopbackPair(t)
		port := FreeTCPPort(t)
		s := Start(t, nil, "rc_pingpong", "--bind", srv, "-p", port, "-g", "1", "-n", "100000000")
		s.WaitLine("local address:", 10*time.Second)
		c := Start(t, nil, "rc_pingpong", "--bind", cli, "-p", port, "-g", "1", "-n", "100000000", "--timeout", "10s", srv)
		s.WaitLine("remote address:", 10*time.Second)
		s.Kill()
		code := c.Wait(15 * time.Second)
		assert.Equal(t, 1, code, "exit status %d, want 1", code)
		assert.Regexp(t, `^gorxe rc_pingpong: (Failed status transport retry counter exceeded \(12\)( for wr_id \d+)?|no completion for 10s after \d+ sends and \d+ receives of 100000000: the peer stopped, or packets were lost)\n$`, c.Stderr())
	})
	t.Run("interrupted", func(t *testing.T) {
		t.Parallel()
		srv, cli := LoopbackPair(t)
		port := FreeTCPPort(t)
		s := Start(t, nil, "rc_pingpong", "--bind", srv, "-p", port, "-g", "1", "-n", "100000000")
		s.WaitLine("local address:", 10*time.Second)
		c := Start(t, nil, "rc_pingpong", "--bind", cli, "-p", port, "-g", "1", "-n", "100000000", srv)
		c.WaitLine("remote address:", 10*time.Second)
		c.Interrupt()
		assert.Equal(t, 130, c.Wait(15*time.Second))
		assert.Regexp(t, `^gorxe rc_pingpong: interrupted after \d+ sends and \d+ receives of 100000000\n$`, c.Stderr())
		s.Kill()
	})
	t.Run("bad option", func(t *testing.T) {
		t.Parallel()
		p := Start(t, nil, "srq_pingpong", "-z")
		code := p.Wait(10 * time.Second)
		assert.Equal(t, 2, code, "exit status %d, want 2", code)
		first, _, _ := strings.Cut(p.Stderr(), "\n")
		assert.Equal(t, "gorxe srq_pingpong: invalid option -- 'z'", first, "stderr starts %q", first)
	})
}

// TestPingpongHelp checks that every tool documents its options.
func TestPingpongHelp(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"rc_pingpong", "uc_pingpong", "ud_pingpong", "srq_pingpong"} {
		p := Start(t, nil, tool, "--help")
		code := p.Wait(10 * time.Second)
		require.Equal(t, 0, code, "%s --help: status %d", tool, code)
		out := p.Stdout()
		assert.Contains(t, out, fmt.Sprintf("gorxe %s <host>", tool), "%s --help:\n%s", tool, out)
	}
}
