package main

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
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
	exe := goTool(t, "exec")
	if out, err := exec.Command(exe[0], exe[1], "--sysfs=on", "--lib", libDir, "--addr", "127.0.0.1", "--", "true").CombinedOutput(); err != nil {
		t.Skipf("the machine refuses gorxe exec's device view, which UCX needs: %v: %s", err, out)
	}
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
			// Each side runs under env(1), which gives it UCX's settings, and gorxe exec.
			under := func(addr string) []string {
				return []string{"UCX_TLS=" + tc.tls, "UCX_NET_DEVICES=gorxe_" + addr + ":1", exe[0], exe[1],
					"--sysfs=on", "--lib", libDir, "--addr", addr, "--", "ucx_perftest"}
			}
			srv := start(t, srvAddr, "env", append(under(srvAddr), "-p", port)...)
			waitListening(t, port, srv)
			cli := start(t, cliAddr, "env", append(append(under(cliAddr), srvAddr, "-p", port, "-n", ucxIters), tc.args...)...)
			out := cli.wait(t)
			assert.Regexp(t, `(?m)^Final:\s+`+ucxIters+`\s`, out)
			srv.wait(t)
		})
	}
}

// ucxAddressPair returns the server's and the client's address of UCX run i (0 to 9: TestUCX's
// runs, and mpiRun). UCX keeps 15 characters of a device's name, so the devices' names, gorxe_
// and the address, must fit: 127.8.i.1 and 127.8.i.2, which no other test uses.
func ucxAddressPair(i int) (server, client string) {
	return fmt.Sprintf("127.8.%d.1", i), fmt.Sprintf("127.8.%d.2", i)
}
