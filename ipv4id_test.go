package gorxe

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// icrcPacket returns a packet of size payload bytes with its ICRC for an IPv4 ID of 0.
func icrcPacket(t testing.TB, size int) []byte {
	h := packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCRDMAReadResponseMiddle, PKey: packet.DefaultPKey, DestQP: 0x12, PSN: 7}}
	pkt, room, err := packet.AppendPacketRoom(nil, &h, size)
	require.NoError(t, err)
	for i := range room {
		room[i] = byte(i * 7)
	}
	env := packet.Envelope{
		Src:     netip.MustParseAddrPort("127.0.0.1:49152"),
		Dst:     netip.MustParseAddrPort("127.0.0.2:4791"),
		IPFlags: packet.IPv4DontFragment,
	}
	require.NoError(t, env.PutICRC(pkt))
	return pkt
}

// TestIPv4IDDeltas: the remembered changes give the ICRC packet.AdjustICRCIPv4ID gives, for
// lengths that share a slot (4096 and 4160 payload bytes differ by the table's size), the first
// and later uses of a slot, and IDs back to 0.
func TestIPv4IDDeltas(t *testing.T) {
	var tab idDeltas
	sizes := []int{4096, 4160, 4096, 1024, 0, 1}
	require.Equal(t, (4096+16)%idDeltaLengths, (4160+16)%idDeltaLengths)
	for _, size := range sizes {
		got, want := icrcPacket(t, size), icrcPacket(t, size)
		prev := uint16(0)
		for _, id := range []uint16{1, 2, 3, 63, 0xFFFF, 0x8000, 5, 0} {
			tab.adjust(got, prev, id)
			packet.AdjustICRCIPv4ID(want, prev, id)
			require.Equal(t, want, got, "size %d id %d", size, id)
			prev = id
		}
	}
}

func TestIPv4IDDeltasShortPacket(t *testing.T) {
	var tab idDeltas
	pkt := []byte{1, 2, 3}
	tab.adjust(pkt, 0, 1)
	assert.Equal(t, []byte{1, 2, 3}, pkt, "too short to carry an ICRC: left alone")
}

func TestIPv4IDDeltasNoAllocs(t *testing.T) {
	pkt := icrcPacket(t, 4096)
	k := uint16(0)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		adjustIPv4ID(&netio.Message{Buf: pkt}, k, k+1)
		k++
	}))
}

// BenchmarkIPv4IDAdjust is the SetIPv4ID hook's cost per datagram of a segmented send of full
// 4096-MTU packets (IDs 1 to 63), against packet.AdjustICRCIPv4ID without the table.
func BenchmarkIPv4IDAdjust(b *testing.B) {
	pkt := icrcPacket(b, 4096)
	b.Run("table", func(b *testing.B) {
		b.SetBytes(int64(len(pkt)))
		for i := 0; b.Loop(); i++ {
			k := uint16(i%63 + 1)
			ipv4IDDeltas.adjust(pkt, 0, k)
			ipv4IDDeltas.adjust(pkt, k, 0)
		}
	})
	b.Run("packet", func(b *testing.B) {
		b.SetBytes(int64(len(pkt)))
		for i := 0; b.Loop(); i++ {
			k := uint16(i%63 + 1)
			packet.AdjustICRCIPv4ID(pkt, 0, k)
			packet.AdjustICRCIPv4ID(pkt, k, 0)
		}
	})
}
