package gidtext

import (
	"errors"
	"fmt"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

func gidOf(s string) gorxe.GID { return gorxe.GID(netip.MustParseAddr(s).As16()) }

func TestFormatGID(t *testing.T) {
	tests := []struct {
		gid  gorxe.GID
		want string
	}{
		{gorxe.GID{}, "::"},
		{gidOf("::ffff:10.99.0.3"), "::ffff:10.99.0.3"},
		{gidOf("::ffff:127.10.1.2"), "::ffff:127.10.1.2"},
		{gidOf("fe80::5054:ff:fe12:3456"), "fe80::5054:ff:fe12:3456"},
		{gidOf("::1"), "::1"},
		{gidOf("::1.2.3.4"), "::1.2.3.4"}, // IPv4-compatible: glibc keeps dotted decimal
		{gidOf("1:0:1:0:1:0:1:0"), "1:0:1:0:1:0:1:0"},
		{gidOf("1:0:0:1:0:0:0:1"), "1:0:0:1::1"},
		{gidOf("1:0:0:1:0:0:1:1"), "1::1:0:0:1:1"}, // equal runs: the first is compressed
		{gidOf("2001:db8::"), "2001:db8::"},
		{gidOf("fd00:1:2:3:4:5:6:7"), "fd00:1:2:3:4:5:6:7"},
		{gidOf("::ffff:0:0"), "::ffff:0.0.0.0"},
	}
	for _, tc := range tests {
		if got := Format(tc.gid); got != tc.want {
			assert.Fail(t, fmt.Sprintf("Format(% x) = %q, want %q", tc.gid[:], got, tc.want))
		}
	}
}

func TestWireGID(t *testing.T) {
	g := gidOf("::ffff:10.99.0.2")
	wire := string(AppendWire(nil, g))
	require.Equal(t, "00000000000000000000ffff0a630002", wire, "AppendWire = %q", wire)
	back, err := ParseWire([]byte("00000000000000000000FFFF0A630002"))
	require.NoError(t, err, "ParseWire = %v, %v; want %v", back, err, g)
	require.Equal(t, g, back, "ParseWire = %v, %v; want %v", back, err, g)
	for _, bad := range []string{"", "00", "0000000000000000000000000000000g", "000000000000000000000000000000000"} {
		if _, err := ParseWire([]byte(bad)); !errors.Is(err, ErrBadGID) {
			assert.Fail(t, fmt.Sprintf("ParseWire(%q) = %v, want ErrBadGID", bad, err))
		}
	}
}

func FuzzParseWireGID(f *testing.F) {
	f.Add([]byte("00000000000000000000ffff0a630002"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseWire(b)
		if err == nil && string(AppendWire(nil, g)) != string(toLower(b)) {
			require.Fail(t, fmt.Sprintf("round trip of %q gave %x", b, g[:]))
		}
	})
}

func toLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
