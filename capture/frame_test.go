package capture

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUDP6Checksum(t *testing.T) {
	src := netip.MustParseAddr("fe80::1").AsSlice()
	dst := netip.MustParseAddr("fe80::2").AsSlice()
	seg := []byte{0x12, 0x34, 0x12, 0xb7, 0, 11, 0, 0, 'a', 'b', 'c'}
	c := udp6Checksum(src, dst, seg)
	assert.NotZero(t, c)
	seg[6], seg[7] = byte(c>>8), byte(c)
	// Summed again with the checksum in place, the ones' complement sum is all ones, whose
	// complement (zero) the function reports as 0xFFFF.
	assert.Equal(t, uint16(0xFFFF), udp6Checksum(src, dst, seg))
	seg[8] ^= 1
	assert.NotEqual(t, uint16(0xFFFF), udp6Checksum(src, dst, seg))
}

func TestAppendMAC(t *testing.T) {
	assert.Equal(t, []byte{2, 0, 10, 0, 0, 1}, appendMAC(nil, netip.MustParseAddr("10.0.0.1")))
	assert.Equal(t, []byte{2, 0, 10, 0, 0, 1}, appendMAC(nil, netip.MustParseAddr("::ffff:10.0.0.1")))
	assert.Equal(t, []byte{2, 0xaa, 0xbb, 0xcc, 0xdd, 0xee}, appendMAC(nil, netip.MustParseAddr("fd00::aa:bbcc:ddee")))
	assert.Equal(t, []byte{2, 0, 0, 0, 0, 0}, appendMAC(nil, netip.Addr{}))
}
