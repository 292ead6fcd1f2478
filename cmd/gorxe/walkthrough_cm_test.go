package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWalkthroughCMCapture: the connection-setup section of docs/wire-walkthrough.md quotes this
// capture (make walkthrough makes it): the CM handshake and teardown on QP1 around rping's RC
// traffic, every ICRC valid, decoded on the port the capture records.
func TestWalkthroughCMCapture(t *testing.T) {
	code, out, errOut := run("dump", "../../docs/walkthrough/cm-rping.pcapng")
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	cm := regexp.MustCompile(` cm=(\w+) `)
	var msgs []string
	for _, l := range lines {
		assert.Contains(t, l, "icrc=ok", l)
		if m := cm.FindStringSubmatch(l); m != nil {
			assert.Contains(t, l, "dqpn=0x000001 ", "CM MADs go to QP1: %s", l)
			msgs = append(msgs, m[1])
		}
	}
	assert.Equal(t, []string{"REQ", "REP", "RTU", "DREQ", "DREP"}, msgs)
	assert.Contains(t, lines[0], "sid=0x0000000001061c06", "RDMA-CM TCP port space, rping's port 7174")
}
