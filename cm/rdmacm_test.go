package cm

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm/mad"
)

func TestRDMACMPath(t *testing.T) {
	// The rping connection of the bundled capture: 10.99.0.3:36338 to
	// 10.99.0.2:7174, active MTU 1024 (netdev MTU 1500).
	p := RDMACMPath(netip.MustParseAddrPort("10.99.0.3:36338"), netip.MustParseAddrPort("10.99.0.2:7174"), mad.MTU1024)
	require.Equal(t, Path{LocalGID: gidA, RemoteGID: gidB, FlowLabel: 0x14c54, HopLimit: 64, MTU: mad.MTU1024}, p)
	require.Equal(t, rpingParams(t).Path, p)
}
