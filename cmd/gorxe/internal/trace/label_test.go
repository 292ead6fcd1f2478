package trace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gorxe/gorxe/packet"
)

func TestLabel(t *testing.T) {
	for _, tc := range []struct {
		p     Packet
		want  string
		style Style
	}{
		{Packet{Opcode: packet.RCSendOnly, PSN: 1, Len: 8, ICRCOK: true}, "RC_SEND_ONLY psn=1 len=8", StyleRequest},
		{Packet{Opcode: packet.RCSendOnly, PSN: 1, Len: 8}, "RC_SEND_ONLY psn=1 len=8 BAD-ICRC", StyleRequest},
		{Packet{Opcode: packet.RCRDMAReadRequest, PSN: 9, DMALen: 4096, ICRCOK: true, Mark: MarkRetransmit},
			"RC_RDMA_READ_REQUEST psn=9 dmalen=4096 [retransmission]", StyleRequest},
		{Packet{Opcode: packet.RCAcknowledge, PSN: 3, HasAETH: true, Syndrome: packet.SyndromeACK(5), ICRCOK: true},
			"RC_ACKNOWLEDGE psn=3 len=0 ACK(credits=5)", StyleACK},
		{Packet{Opcode: packet.RCAcknowledge, PSN: 3, HasAETH: true, Syndrome: packet.SyndromeRNRNAK(0), ICRCOK: true},
			"RC_ACKNOWLEDGE psn=3 len=0 RNR_NAK(655.36ms)", StyleRNR},
		{Packet{Opcode: packet.RCAcknowledge, PSN: 3, HasAETH: true, Syndrome: packet.SyndromeNAKInvalidRequest, ICRCOK: true},
			"RC_ACKNOWLEDGE psn=3 len=0 NAK_INVALID_REQUEST", StyleNAK},
		{Packet{Opcode: packet.RCAcknowledge, PSN: 3, HasAETH: true, Syndrome: 0x6A, ICRCOK: true},
			"RC_ACKNOWLEDGE psn=3 len=0 NAK(code=0x0a)", StyleNAK},
		{Packet{Opcode: packet.RCAtomicAcknowledge, PSN: 4, HasAETH: true, Syndrome: packet.SyndromeNAKPSNSequenceError, ICRCOK: true, Mark: MarkDuplicate},
			"RC_ATOMIC_ACKNOWLEDGE psn=4 len=0 NAK_PSN_SEQUENCE_ERROR [duplicate]", StyleNAKSeq},
		{Packet{Opcode: packet.RCRDMAReadResponseMiddle, PSN: 5, Len: 1024, ICRCOK: true, Mark: MarkFill},
			"RC_RDMA_READ_RESPONSE_MIDDLE psn=5 len=1024 [fills gap]", StyleResponse},
		{Packet{Opcode: packet.CNP, PSN: 0, Len: 16, ICRCOK: true}, "CNP psn=0 len=16", StyleCNP},
	} {
		assert.Equal(t, tc.want, Label(&tc.p))
		assert.Equal(t, tc.style, styleOf(&tc.p), tc.want)
	}
}

func TestOtherLabels(t *testing.T) {
	assert.Equal(t, "lost psn=7", LossLabel(&Loss{First: 7, Last: 7}))
	assert.Equal(t, "lost psn=16777215..1 (3)", LossLabel(&Loss{First: 0xFFFFFF, Last: 1}), "across the wrap")
	assert.Equal(t, "2.138s without packets", GapLabel(2137790126*time.Nanosecond))
	pkts := []Packet{{Opcode: packet.UCSendMiddle, PSN: 10, Len: 1024}, {Opcode: packet.UCSendMiddle, PSN: 11, Len: 1000}}
	assert.Equal(t, "UC_SEND_MIDDLE ×2 psn=10..11 len=2024", BandLabel(pkts, []int{0, 1}))
}

// TestPause checks the extra space between rows: none up to 100µs, then 6 pixels per decade,
// at most maxPause.
func TestPause(t *testing.T) {
	for _, tc := range []struct {
		dt   time.Duration
		want float64
	}{
		{0, 0}, {-time.Millisecond, 0}, {100 * time.Microsecond, 0}, {time.Millisecond, 6},
		{10 * time.Millisecond, 12}, {100 * time.Millisecond, 18}, {time.Hour, maxPause},
	} {
		assert.Equal(t, tc.want, pause(tc.dt), "%v", tc.dt)
	}
}
