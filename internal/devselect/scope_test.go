package devselect

import (
	"net"
	"net/netip"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScopeZone: a sin6_scope_id names its interface by name, and back; an index no interface
// has stays a number, and 0 is no zone.
func TestScopeZone(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	require.NoError(t, err)
	assert.Equal(t, "lo", ZoneOf(uint32(lo.Index)))
	assert.Equal(t, uint32(lo.Index), ScopeOf("lo"))
	assert.Equal(t, uint32(lo.Index), ScopeOf(strconv.Itoa(lo.Index)))
	assert.Equal(t, "", ZoneOf(0))
	assert.Equal(t, uint32(0), ScopeOf(""))
	assert.Equal(t, "4000000000", ZoneOf(4000000000))
	assert.Equal(t, uint32(4000000000), ScopeOf("4000000000"))
	assert.Equal(t, uint32(0), ScopeOf("nosuch9"))
}

// TestSameAddr: a device's link-local address is the program's only on the same interface, named
// by name or index; other addresses ignore zones, and IPv4-mapped ones are IPv4.
func TestSameAddr(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	require.NoError(t, err)
	idx := strconv.Itoa(lo.Index)
	for _, tc := range []struct {
		local, a string
		want     bool
	}{
		{"fe80::1%lo", "fe80::1%lo", true},
		{"fe80::1%lo", "fe80::1%" + idx, true},
		{"fe80::1%lo", "fe80::1%nosuch9", false},
		{"fe80::1%lo", "fe80::1", false},
		{"fe80::1%lo", "fe80::2%lo", false},
		{"fe80::1%link0", "fe80::1%link0", true},
		{"fd00::1", "fd00::1%lo", true},
		{"fd00::1", "fd00::1", true},
		{"fd00::1", "fd00::2", false},
		{"127.0.0.1", "::ffff:127.0.0.1", true},
		{"127.0.0.1", "127.0.0.2", false},
	} {
		assert.Equal(t, tc.want, SameAddr(netip.MustParseAddr(tc.local), netip.MustParseAddr(tc.a)), "%s vs %s", tc.local, tc.a)
	}
}

func TestLinkLocalNeedsScope(t *testing.T) {
	assert.True(t, LinkLocalNeedsScope(netip.MustParseAddr("fe80::1")))
	assert.False(t, LinkLocalNeedsScope(netip.MustParseAddr("fe80::1%lo")))
	assert.False(t, LinkLocalNeedsScope(netip.MustParseAddr("fd00::1")))
	assert.False(t, LinkLocalNeedsScope(netip.MustParseAddr("169.254.0.1")))
}
