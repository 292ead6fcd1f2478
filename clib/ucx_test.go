package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ucxIters keeps each UCX run short: the test checks that the transfers complete, not their speed.
const ucxIters = "200"

// TestUCX runs UCX's ucx_perftest (the distribution's ucx-utils, unmodified) as two processes on
// the library, under gorxe exec's device view: UCX lists an RDMA device only if its
// /dev/infiniband/uverbsN is a character device it may read and write. The transports are UCX's
// generic verbs ones, rc_verbs (with ud_verbs, which sets its connections up) and ud_verbs alone,
// and nothing else, so every message crosses gorxe: tagged messages, RMA writes and reads, an
// atomic, and active messages. Its UD transport finds the destination address of a datagram in
// the receive buffer's network header by the header type the completion's sl reports.
func TestUCX(t *testing.T) {
	needLibrary(t, "ucx_perftest")
	underView(t, "127.0.0.1") // UCX needs the view: skip here where the machine refuses it
	const rc, ud = "rc_verbs,ud_verbs,self", "ud_verbs,self"
	for i, tc := range []struct {
		name, tls string
		args      []string
	}{
		{"rc tag_bw", rc, []string{"-t", "tag_bw", "-s", "65536"}},
		{"rc tag_lat", rc, []string{"-t", "tag_lat", "-s", "8"}},
		{"rc put", rc, []string{"-t", "ucp_put_bw", "-s", "65536"}},
		{"rc get", rc, []string{"-t", "ucp_get", "-s", "65536"}},
		{"rc atomic add", rc, []string{"-t", "ucp_add"}},
		{"rc am_bw", rc, []string{"-t", "ucp_am_bw", "-s", "8192"}},
		{"ud tag_bw", ud, []string{"-t", "tag_bw", "-s", "65536"}},
		{"ud tag_lat", ud, []string{"-t", "tag_lat", "-s", "8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srvAddr, cliAddr := ucxAddressPair(i)
			port := freeTCPPort(t)
			// Each side runs under gorxe exec, and env(1), which gives it UCX's settings.
			under := func(addr string) []string {
				return append(underView(t, addr), "env", "UCX_TLS="+tc.tls, "UCX_NET_DEVICES=gorxe_"+addr+":1", "ucx_perftest")
			}
			s, c := under(srvAddr), under(cliAddr)
			srv := start(t, srvAddr, s[0], append(s[1:], "-p", port)...)
			waitListening(t, port, srv)
			cli := start(t, cliAddr, c[0], append(append(c[1:], srvAddr, "-p", port, "-n", ucxIters), tc.args...)...)
			out := cli.wait(t)
			assert.Regexp(t, `(?m)^Final:\s+`+ucxIters+`\s`, out)
			srv.wait(t)
		})
	}
}

// ucxSockaddrRuns is the first UCX address pair (ucxAddressPair) of TestUCXSockaddr's three runs.
const ucxSockaddrRuns = 10

// ucxAddressPair returns the server's and the client's address of UCX run i, 0 to 19 (TestUCX's
// runs from 0, TestUCXSockaddr's from ucxSockaddrRuns, and mpiRun). UCX keeps 15 characters of a
// device's name, so the devices' names, gorxe_ and the address, must fit: 127.8.i.1 and
// 127.8.i.2, then 127.9.*, which no other test uses.
func ucxAddressPair(i int) (server, client string) {
	net := fmt.Sprintf("127.%d.%d.", 8+i/10, i%10)
	return net + "1", net + "2"
}

// ucxExample is UCX's client-server example, which libucx-dev ships as source.
const ucxExample = "/usr/share/doc/libucx-dev/examples/ucp_client_server.c"

// TestUCXSockaddr builds UCX's own client-server example and runs it on the library: its
// endpoints connect through librdmacm (UCX's rdmacm connection manager, which creates a UD QP on
// the id's PD for a QP number to offer) and exchange tagged, stream and active messages over
// rc_verbs alone.
func TestUCXSockaddr(t *testing.T) {
	needLibrary(t, "ucx_perftest", "gcc")
	if _, err := os.Stat(ucxExample); err != nil {
		t.Skipf("UCX's examples are not installed (libucx-dev): %v", err)
	}
	underView(t, "127.0.0.1") // UCX needs the view: skip here where the machine refuses it
	prog := filepath.Join(t.TempDir(), "ucp_client_server")
	out, err := exec.Command("gcc", "-O2", "-o", prog, ucxExample, "-I", filepath.Dir(ucxExample), "-lucp", "-lucs").CombinedOutput()
	require.NoError(t, err, "gcc: %s", out)

	for i, api := range []string{"tag", "stream", "am"} {
		t.Run(api, func(t *testing.T) {
			srvAddr, cliAddr := ucxAddressPair(ucxSockaddrRuns + i)
			port := freeTCPPort(t)
			under := func(addr string) []string {
				return append(underView(t, addr), "env", "UCX_TLS=rc_verbs,self", "UCX_NET_DEVICES=gorxe_"+addr+":1")
			}
			// The server serves until it is stopped, and says on stderr when it listens. gorxe
			// exec passes SIGTERM on to it; a SIGKILL would leave it running.
			// Both sides run as many iterations (-i), as the example requires.
			s, c := under(srvAddr), under(cliAddr)
			srv := exec.Command(s[0], append(s[1:], prog, "-l", srvAddr, "-p", port, "-c", api, "-i", "4")...)
			stderr, err := srv.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, srv.Start())
			t.Cleanup(func() {
				_ = srv.Process.Signal(syscall.SIGTERM)
				_ = srv.Wait()
			})
			listening := make(chan struct{})
			go func() {
				s := bufio.NewScanner(stderr)
				for s.Scan() {
					if strings.HasPrefix(s.Text(), "server is listening") {
						close(listening)
						break
					}
				}
				_, _ = io.Copy(io.Discard, stderr)
			}()
			select {
			case <-listening:
			case <-time.After(procTimeout):
				t.Fatal("the server did not listen")
			}
			cli := start(t, cliAddr, c[0], append(c[1:], prog, "-a", srvAddr, "-p", port, "-c", api, "-i", "4")...)
			// The client prints the messages the server sent it: the example's test string.
			assert.Contains(t, cli.wait(t), "\nABCDEFGHIJKLMNO.\n")
		})
	}
}
