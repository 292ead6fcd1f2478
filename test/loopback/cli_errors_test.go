package loopback

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestDialNobodyTimesOut: rping, ucmatose and rdma_client dialing an address where no device
// answers give up after --timeout with one line saying what timed out and after how long.
func TestDialNobodyTimesOut(t *testing.T) {
	t.Parallel()
	silent, cli := LoopbackPair(t) // nothing runs on silent
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rping", "-c", "-a", silent, "-I", cli, "-p", "7300", "--timeout", "300ms"},
			"gorxe rping: connect to " + silent + ":7300: timed out after 300ms\n"},
		{[]string{"ucmatose", "-s", silent, "-b", cli, "-p", "7301", "--timeout", "300ms"},
			"gorxe ucmatose: cmatose: event: connect to " + silent + ":7301: timed out after 300ms\n"},
		{[]string{"rdma_client", "-s", silent, "-p", "7302", "--bind", cli, "--timeout", "300ms"},
			"gorxe rdma_client: rdma_connect: timed out after 300ms\n"},
	} {
		p := Start(t, nil, tc.args...)
		assert.Equal(t, 1, p.Wait(20*time.Second), "%s: stderr %q", tc.args[0], p.Stderr())
		assert.Equal(t, tc.want, p.Stderr(), tc.args[0])
	}
}

// TestInterruptedIsOneWord: Ctrl-C while a server waits ends it with the runner's one wording.
func TestInterruptedIsOneWord(t *testing.T) {
	t.Parallel()
	srv, _ := LoopbackPair(t)
	for _, args := range [][]string{
		{"rdma_server", "-s", srv, "-p", FreeTCPPort(t)},
		{"ucmatose", "-b", srv, "-p", FreeTCPPort(t)},
	} {
		p := Start(t, nil, args...)
		p.WaitLine("start", 10*time.Second)
		p.Interrupt()
		assert.Equal(t, 130, p.Wait(20*time.Second), args[0])
		assert.Equal(t, "gorxe "+args[0]+": interrupted\n", p.Stderr(), args[0])
	}
}

// TestStatsNothingServing: gorxe stats with no tool behind the address says so in one line.
func TestStatsNothingServing(t *testing.T) {
	t.Parallel()
	port := FreeTCPPort(t)
	p := Start(t, nil, "stats", "-once", "127.0.0.1:"+port)
	assert.Equal(t, 1, p.Wait(10*time.Second))
	assert.Equal(t, "gorxe stats: nothing is serving metrics at 127.0.0.1:"+port+
		" (is a gorxe tool running with --metrics 127.0.0.1:"+port+"?)\n", p.Stderr())
}

// TestBadPortOnce: a GORXE_PORT that is no port is one line, not one per device.
func TestBadPortOnce(t *testing.T) {
	t.Parallel()
	p := Start(t, []string{"GORXE_PORT=abc"}, "devinfo")
	assert.Equal(t, 1, p.Wait(10*time.Second))
	assert.Equal(t, "gorxe devinfo: GORXE_PORT=\"abc\" is not a UDP port number (1-65535)\n", p.Stderr())
}
