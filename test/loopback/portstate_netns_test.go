package loopback

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A device's port follows its interface's link as rxe's does: ACTIVE and LINK_UP while the
// interface runs, DOWN and POLLING while it is up without carrier (its veth peer is down), DOWN
// and DISABLED once the administrator takes it down. The interface lives in a namespace the test
// creates, since only there can it lose its carrier.
func TestPortStateFollowsLink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs the ip command")
	}
	ns := fmt.Sprintf("gxport%d", os.Getpid()%100000)
	ip := func(args ...string) {
		t.Helper()
		out, err := exec.Command("ip", args...).CombinedOutput()
		require.NoError(t, err, "ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	exec.Command("ip", "netns", "del", ns).Run() // a killed earlier run's
	ip("netns", "add", ns)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	ip("-n", ns, "link", "add", "psveth0", "type", "veth", "peer", "name", "psveth1")
	ip("-n", ns, "addr", "add", "192.0.2.1/24", "dev", "psveth0")

	for _, tc := range []struct {
		name      string
		up        []string // interfaces set up before devinfo runs
		down      []string
		state     string
		physState string
	}{
		{"no carrier", []string{"psveth0"}, nil, "PORT_DOWN (1)", "POLLING (2)"},
		{"running", []string{"psveth1"}, nil, "PORT_ACTIVE (4)", "LINK_UP (5)"},
		{"admin down", nil, []string{"psveth0"}, "PORT_DOWN (1)", "DISABLED (3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, d := range tc.up {
				ip("-n", ns, "link", "set", d, "up")
			}
			for _, d := range tc.down {
				ip("-n", ns, "link", "set", d, "down")
			}
			p := StartIn(t, ns, nil, "devinfo", "-v", "-d", "gorxe_psveth0")
			require.Zero(t, p.Wait(20*time.Second), "stderr:\n%s", p.Stderr())
			out := p.Stdout()
			assert.Contains(t, out, "\t\t\tstate:\t\t\t"+tc.state+"\n")
			assert.Contains(t, out, "\t\t\tphys_state:\t\t"+tc.physState+"\n")
		})
	}
}
