package packet

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func BenchmarkParse(b *testing.B) {
	g := golden(b)
	var p Parsed
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := Parse(g[i].pkt, &p); err != nil {
			b.Fatal(err)
		}
		if i++; i == len(g) {
			i = 0
		}
	}
}

// icrcBenchSizes are RoCE packet sizes (BTH to ICRC) to sweep.
var icrcBenchSizes = []int{64, 256, 1024, 4096}

func benchPacket(b *testing.B, n int) []byte {
	pkt, err := AppendPacket(nil, &Headers{BTH: BTHFields{Opcode: RCSendMiddle, PKey: 0xFFFF, DestQP: 0x11}}, make([]byte, n-BTHSize-ICRCSize))
	require.NoError(b, err)
	return pkt
}

var benchEnv = Envelope{
	Src:     netip.MustParseAddrPort("10.0.0.1:49153"),
	Dst:     netip.MustParseAddrPort("10.0.0.2:4791"),
	IPFlags: IPv4DontFragment,
}

func BenchmarkPutICRC(b *testing.B) {
	for _, n := range icrcBenchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			pkt := benchPacket(b, n)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if err := benchEnv.PutICRC(pkt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerifyICRCIPv4AnyID checks packets as kernel rxe sends them (some IP ID, so the
// solver runs), as gorxe sends them (ID 0 with DF, the solver's base), and the fifth segment of
// a gorxe segmented send (ID 5), not expected and expected (VerifyICRCIPv4AnyIDNear).
func BenchmarkVerifyICRCIPv4AnyID(b *testing.B) {
	for _, sender := range []struct {
		name     string
		id, near uint16
	}{{"rxe", 0xBEEF, 0}, {"gorxe", 0, 0}, {"segment", 5, 0}, {"segment-expected", 5, 5}} {
		for _, n := range icrcBenchSizes {
			b.Run(fmt.Sprintf("%s/%d", sender.name, n), func(b *testing.B) {
				pkt := benchPacket(b, n)
				env := benchEnv
				env.IPID = sender.id
				require.NoError(b, env.PutICRC(pkt))
				b.SetBytes(int64(n))
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := VerifyICRCIPv4AnyIDNear(env.Src, env.Dst, pkt, sender.near); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func TestICRCAllocs(t *testing.T) {
	pkt := benchPacket2(t, 1024)
	env := benchEnv
	env.IPID = 7
	require.NoError(t, env.PutICRC(pkt))
	VerifyICRCIPv4AnyID(env.Src, env.Dst, pkt) // build the tables outside the count
	allocs := testing.AllocsPerRun(100, func() {
		if env.PutICRC(pkt) != nil || env.VerifyICRC(pkt) != nil {
			t.Fatal("ICRC failed")
		}
		if _, _, err := VerifyICRCIPv4AnyID(env.Src, env.Dst, pkt); err != nil {
			t.Fatal(err)
		}
	})
	assert.Equal(t, float64(0), allocs, "ICRC functions allocate %v times per run", allocs)
}

func benchPacket2(t *testing.T, n int) []byte {
	return mustAppend(t, &Headers{BTH: BTHFields{Opcode: RCSendMiddle, PKey: 0xFFFF, DestQP: 0x11}}, make([]byte, n-BTHSize-ICRCSize))
}
