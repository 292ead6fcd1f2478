package devinfo

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// The port states kernel rxe reports: active and LinkUp only on a running interface; down and
// Polling on an interface that is up without carrier; down and Disabled on one that is down.
func TestOnLink(t *testing.T) {
	active := gorxe.PortAttr{State: gorxe.PortActive, PhysState: physLinkUp, ActiveMTU: gorxe.MTU1024}
	tests := []struct {
		name      string
		link      Link
		state     gorxe.PortState
		physState uint8
	}{
		{"running", Link{Up: true, Running: true}, gorxe.PortActive, physLinkUp},
		{"no carrier", Link{Up: true}, gorxe.PortDown, physPolling},
		{"down", Link{}, gorxe.PortDown, physDisabled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := onLink(active, tt.link)
			assert.Equal(t, tt.state, got.State)
			assert.Equal(t, tt.physState, got.PhysState)
			assert.Equal(t, gorxe.MTU1024, got.ActiveMTU, "the other attributes stay")
		})
	}
}

// TestRunWithoutCarrier shows the device bound to the loopback's address while the loopback is
// reported without carrier: devinfo must say PORT_DOWN and POLLING, as rxe does.
func TestRunWithoutCarrier(t *testing.T) {
	var asked []string
	noCarrier := func(ifname string) (Link, bool) {
		asked = append(asked, ifname)
		return Link{Up: true}, true
	}
	var b bytes.Buffer
	require.NoError(t, run(Options{Bind: "127.0.0.1", Verbose: true}, &b, io.Discard, noCarrier))
	assert.Equal(t, []string{"lo"}, asked, "the link of the interface that has the address")
	assert.Contains(t, b.String(), "\t\t\tstate:\t\t\tPORT_DOWN (1)\n")
	assert.Contains(t, b.String(), "\t\t\tphys_state:\t\tPOLLING (2)\n")

	b.Reset()
	adminDown := func(string) (Link, bool) { return Link{}, true }
	require.NoError(t, run(Options{Bind: "127.0.0.1", Verbose: true}, &b, io.Discard, adminDown))
	assert.Contains(t, b.String(), "\t\t\tstate:\t\t\tPORT_DOWN (1)\n")
	assert.Contains(t, b.String(), "\t\t\tphys_state:\t\tDISABLED (3)\n")
}

func TestSystemLinkLoopback(t *testing.T) {
	l, ok := SystemLink("lo")
	require.True(t, ok)
	assert.Equal(t, Link{Up: true, Running: true}, l)
	_, ok = SystemLink("nosuch9")
	assert.False(t, ok)
}
