package packet

import "testing"

// BenchmarkAppendPacketAtomic builds the opcode with the most extension
// headers on RC (AETH and AtomicAckETH), in place: the header table's encode
// step is all the work there is.
func BenchmarkAppendPacketAtomic(b *testing.B) {
	h := Headers{BTH: BTHFields{Opcode: RCAtomicAcknowledge, PKey: 0xFFFF, DestQP: 0x11},
		AETH: AETHFields{Syndrome: SyndromeACKUnlimited, MSN: 7}, AtomicAckETH: AtomicAckETHFields{OriginalRemoteData: 42}}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := AppendPacket(buf[:0], &h, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParsedHeaders parses every golden packet and decodes all its
// headers into a Headers.
func BenchmarkParsedHeaders(b *testing.B) {
	g := golden(b)
	var p Parsed
	var h Headers
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := Parse(g[i].pkt, &p); err != nil {
			b.Fatal(err)
		}
		p.Headers(&h)
		if i++; i == len(g) {
			i = 0
		}
	}
}
