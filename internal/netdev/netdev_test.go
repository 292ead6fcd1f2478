package netdev

import (
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGIDTableLayout(t *testing.T) {
	mac := net.HardwareAddr{0x02, 0xfc, 0x00, 0x00, 0x00, 0x01}
	ll := netip.MustParseAddr("fe80::fc:ff:fe00:1")
	v6 := netip.MustParseAddr("fd00::2")
	v4 := netip.MustParseAddr("192.0.2.2")
	v4b := netip.MustParseAddr("198.51.100.7")
	got := GIDTable(mac, []netip.Addr{v6, v4, ll, v4b}, map[netip.Addr]bool{v6: true, v4: true, ll: true})
	assert.Equal(t, []GID{{ll, true}, {v4, true}, {v4b, false}, {v6, true}}, got)
}

func TestByAddrLoopback(t *testing.T) {
	b := ByAddr(netip.MustParseAddr("127.0.0.1"))
	assert.Equal(t, "gorxe_127.0.0.1", b.Name)
	require.Len(t, b.GIDs, 2)
	// Loopback has no MAC: index 0 comes from a locally administered MAC built from the address,
	// and the device has no socket on it.
	assert.Equal(t, GID{netip.MustParseAddr("fe80::7fff:fe00:1"), false}, b.GIDs[0])
	assert.Equal(t, GID{netip.MustParseAddr("127.0.0.1"), true}, b.GIDs[1])
	assert.Equal(t, uint64(0x00007ffffe000001), b.NodeGUID())
}

func TestByInterfaceUnknown(t *testing.T) {
	_, err := ByInterface("gorxe-does-not-exist0")
	assert.Error(t, err)
}

func TestLinkOfLoopback(t *testing.T) {
	l, ok := LinkOf("lo")
	require.True(t, ok)
	assert.Equal(t, Link{Up: true, Running: true}, l)
	_, ok = LinkOf("nosuch9")
	assert.False(t, ok)
}
