package packet

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdjustICRCIPv4ID checks the adjusted ICRC against one computed afresh with the new ID, for
// small and full-size packets and IDs back and forth.
func TestAdjustICRCIPv4ID(t *testing.T) {
	src := netip.MustParseAddrPort("10.0.0.1:49152")
	dst := netip.MustParseAddrPort("10.0.0.2:4791")
	// 4096 and 4160 share a slot of the table of remembered changes, and 4096 comes back after
	// 4160 took its slot over; every size runs twice, from the computation and from the table.
	require.Equal(t, 4096%idChangeLengths, 4160%idChangeLengths)
	for _, size := range []int{0, 1, 60, 1024, 4096, 4160, 4096, anyIDDirect, 9000, 0, 1, 60, 1024, 9000} {
		h := Headers{BTH: BTHFields{Opcode: RCRDMAWriteMiddle, PKey: DefaultPKey, DestQP: 0x12, PSN: 7}}
		pkt, room, err := AppendPacketRoom(nil, &h, size)
		require.NoError(t, err)
		for i := range room {
			room[i] = byte(i * 7)
		}
		env := Envelope{Src: src, Dst: dst, IPFlags: IPv4DontFragment}
		require.NoError(t, env.PutICRC(pkt))
		prev := uint16(0)
		for _, id := range []uint16{1, 2, 63, 0xFFFF, 0x8000, 0} {
			AdjustICRCIPv4ID(pkt, prev, id)
			env.IPID = id
			assert.NoError(t, env.VerifyICRC(pkt), "size %d id %d", size, id)
			prev = id
		}
	}
}

func TestAdjustICRCIPv4IDNoAllocs(t *testing.T) {
	pkt := make([]byte, 4096+28)
	assert.Zero(t, testing.AllocsPerRun(100, func() { AdjustICRCIPv4ID(pkt, 0, 5) }))
}

func BenchmarkAdjustICRCIPv4ID(b *testing.B) {
	for _, size := range []int{80, 1052, 4124} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			pkt := make([]byte, size)
			id := uint16(0)
			for b.Loop() {
				AdjustICRCIPv4ID(pkt, id, id+1)
				id++
			}
		})
	}
}
