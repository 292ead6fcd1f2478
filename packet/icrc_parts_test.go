package packet

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPutICRCParts checks that a packet held as head, payload and tail gets the ICRC the same
// packet gets whole, over IPv4 and IPv6 and with every pad count, and that its IPv4 ID can be
// adjusted in the tail as in the whole packet.
func TestPutICRCParts(t *testing.T) {
	for _, env := range []Envelope{
		{Src: netip.MustParseAddrPort("10.0.0.1:49152"), Dst: netip.MustParseAddrPort("10.0.0.2:4791"),
			IPFlags: IPv4DontFragment, TrafficClass: 0x12, HopLimit: 64},
		{Src: netip.MustParseAddrPort("[fd00::1]:49153"), Dst: netip.MustParseAddrPort("[fd00::2]:4791")},
	} {
		for _, size := range []int{1, 2, 3, 4, 61, 1024, 4096} {
			h := Headers{BTH: BTHFields{Opcode: RCRDMAWriteFirst, PKey: DefaultPKey, DestQP: 0x12, PSN: 7},
				RETH: RETHFields{VirtualAddress: 0x1000, RKey: 0x55, DMALength: 8192}}
			whole, room, err := AppendPacketRoom(nil, &h, size)
			require.NoError(t, err)
			for i := range room {
				room[i] = byte(i*7 + 3)
			}
			require.NoError(t, env.PutICRC(whole))

			hl := RCRDMAWriteFirst.HeaderLen()
			head := bytes.Clone(whole[:hl])
			payload := bytes.Clone(room)
			tail := make([]byte, len(whole)-hl-size)
			require.NoError(t, env.PutICRCParts(head, payload, tail))
			joined := append(append(bytes.Clone(head), payload...), tail...)
			assert.Equal(t, whole, joined, "%v size %d", env.Src, size)

			if env.Src.Addr().Is4() {
				AdjustICRCIPv4ID(whole, 0, 9)
				AdjustICRCIPv4IDAt(tail[len(tail)-ICRCSize:], len(joined), 0, 9)
				assert.Equal(t, whole[len(whole)-ICRCSize:], tail[len(tail)-ICRCSize:], "size %d", size)
				e := env
				e.IPID = 9
				assert.NoError(t, e.VerifyICRC(whole))
			}
		}
	}
	env := Envelope{Src: netip.MustParseAddrPort("10.0.0.1:1"), Dst: netip.MustParseAddrPort("10.0.0.2:4791")}
	assert.ErrorIs(t, env.PutICRCParts(make([]byte, BTHSize-1), nil, make([]byte, ICRCSize)), ErrTruncated)
	assert.ErrorIs(t, env.PutICRCParts(make([]byte, BTHSize), nil, make([]byte, ICRCSize-1)), ErrTruncated)
}
