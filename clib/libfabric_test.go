package main

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

// libfabricIters keeps each run short: the test checks that the exchanges complete and carry
// their data, not their speed.
const libfabricIters = "200"

// TestLibfabric runs libfabric's fi_pingpong (the distribution's libfabric-bin, unmodified) as
// two processes on the library through libfabric's verbs provider, with its data checks (-c):
// connected endpoints (FI_EP_MSG, over librdmacm), reliable datagrams (FI_EP_RDM, its rxm layer
// over them) and unreliable ones (FI_EP_DGRAM, over UD). Two of libfabric's settings are given
// as on kernel rxe: FI_UNIVERSE_SIZE, since rxm sizes a CQ for 256 peers, more than the
// device's max_cqe, and FI_VERBS_GID_IDX, since the datagram endpoints take GID index 0 unless
// told, the link-local GID, which a device on one loopback address has no socket on.
//
// The verbs provider finds a passive endpoint's device by the interface addresses it lists, so
// the server is on 127.0.0.1, lo's own, and both sides on a RoCE UDP port of their own, as other
// programs on the host may hold 4791 there.
func TestLibfabric(t *testing.T) {
	needLibrary(t, "fi_pingpong")
	for _, tc := range []struct{ name, ep, size string }{
		{"msg", "msg", "64"},
		{"msg 64 KiB", "msg", "65536"},
		{"rdm", "rdm", "64"},
		// The side that finishes last waits for the ACK of its final SEND while the other
		// disconnects: the ACK must complete it before the DREQ behind it destroys the QP.
		{"rdm 64 KiB", "rdm", "65536"},
		{"dgram", "dgram", "64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const srvAddr = "127.0.0.1"
			_, cliAddr := addressPair()
			port, roce := freeTCPPort(t), strconv.Itoa(freeUDPPort(t, srvAddr))
			args := func(extra ...string) []string {
				return append([]string{"GORXE_PORT=" + roce, "FI_UNIVERSE_SIZE=32", "FI_VERBS_GID_IDX=1",
					"fi_pingpong", "-p", "verbs", "-e", tc.ep, "-I", libfabricIters, "-S", tc.size, "-c"}, extra...)
			}
			srv := start(t, srvAddr, "env", args("-B", port)...)
			waitListening(t, port, srv)
			cli := start(t, cliAddr, "env", args("-P", port, srvAddr)...)
			for _, p := range []*proc{cli, srv} {
				out := p.wait(t)
				assert.Regexp(t, `(?m)^\S+\s+`+libfabricIters+`\s+=`+libfabricIters+`\s`, out, "%s", p.name)
			}
		})
	}
}
