package loopback

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDevinfo(t *testing.T) {
	t.Parallel()
	p := Start(t, nil, "devinfo", "-v", "-d", "lo")
	code := p.Wait(10 * time.Second)
	require.Equal(t, 0, code, "devinfo: status %d\n%s", code, p.Stderr())
	out := p.Stdout()
	for _, want := range []string{
		"hca_id:\tgorxe_lo\n",
		"\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n",
		"\t\t\tmax_mtu:\t\t4096 (5)\n",
		"\t\t\tlink_layer:\t\tEthernet\n",
		"\t\t\tGID[  1]:\t\t::ffff:127.0.0.1, RoCE v2\n",
	} {
		assert.Contains(t, out, want, "devinfo -v -d lo lacks %q:\n%s", want, out)
	}

	// The environment selects the device when -d is absent; a bound address counts as a device.
	p = Start(t, []string{"GORXE_ADDR=127.10.250.9"}, "devinfo")
	code = p.Wait(10 * time.Second)
	assert.Equal(t, 0, code, "GORXE_ADDR devinfo: status %d\n%s%s", code, p.Stdout(), p.Stderr())
	assert.True(t, strings.HasPrefix(p.Stdout(), "hca_id:\tgorxe_127.10.250.9\n"), "GORXE_ADDR devinfo: status %d\n%s%s", code, p.Stdout(), p.Stderr())

	p = Start(t, nil, "devinfo", "-l")
	code = p.Wait(10 * time.Second)
	assert.Equal(t, 0, code, "devinfo -l: status %d\n%s", code, p.Stdout())
	assert.Contains(t, p.Stdout(), "\tgorxe_lo\n", "devinfo -l: status %d\n%s", code, p.Stdout())

	p = Start(t, nil, "devinfo", "-d", "nosuch0")
	code = p.Wait(10 * time.Second)
	assert.Equal(t, 1, code, "devinfo -d nosuch0: status %d, stderr %q", code, p.Stderr())
	assert.Equal(t, "gorxe devinfo: IB device 'nosuch0' wasn't found\n", p.Stderr(), "devinfo -d nosuch0: status %d, stderr %q", code, p.Stderr())
}
