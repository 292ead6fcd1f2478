package fabrictest

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/netio"
)

// TestDevices opens three devices from one template on one fabric: each at its address on the
// template's port, with the template's MTU, and each endpoint wrapped once.
func TestDevices(t *testing.T) {
	fab := netio.NewFabric(netio.FabricConfig{})
	t.Cleanup(fab.Close)
	var wrapped int
	devs := Devices(t, fab, Options{
		Config: gorxe.Config{Port: 14791, MTU: gorxe.MTU1024},
		Wrap:   func(c netio.Conn) netio.Conn { wrapped++; return c },
	}, "10.0.0.1", "10.0.0.2", "fd00::3")
	require.Len(t, devs, 3)
	assert.Equal(t, 3, wrapped)
	for i, want := range []string{"10.0.0.1", "10.0.0.2", "fd00::3"} {
		assert.Equal(t, []netip.AddrPort{netip.AddrPortFrom(netip.MustParseAddr(want), 14791)}, devs[i].LocalAddrs())
		assert.Equal(t, "gorxe_"+want, devs[i].Name())
	}
	port, err := devs[0].QueryPort(1)
	require.NoError(t, err)
	assert.Equal(t, gorxe.MTU1024, port.ActiveMTU)

}
