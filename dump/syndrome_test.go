package dump

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gorxe/gorxe/packet"
)

// The capture holds only positive ACKs; these cover the other syndromes.
func TestSyndromeText(t *testing.T) {
	tests := []struct {
		s       packet.Syndrome
		short   string
		meaning string // substring of the verbose explanation
	}{
		{packet.SyndromeACKUnlimited, "ACK", "unlimited credits"},
		{packet.SyndromeACK(5), "ACK(credits=5)", "5 receive credits"},
		{packet.SyndromeRNRNAK(0), "RNR_NAK(655.36ms)", "timer code 0 = 655.36 ms"},
		{packet.SyndromeRNRNAK(1), "RNR_NAK(0.01ms)", "timer code 1 = 0.01 ms"},
		{packet.SyndromeRNRNAK(12), "RNR_NAK(0.64ms)", "receiver not ready"},
		{packet.SyndromeRNRNAK(25), "RNR_NAK(61.44ms)", "= 61.44 ms"},
		{packet.SyndromeRNRNAK(31), "RNR_NAK(491.52ms)", "= 491.52 ms"},
		{packet.SyndromeNAKPSNSequenceError, "NAK_PSN_SEQUENCE_ERROR", "code 0, PSN sequence error"},
		{packet.SyndromeNAKInvalidRequest, "NAK_INVALID_REQUEST", "code 1, invalid request"},
		{packet.SyndromeNAKRemoteAccessError, "NAK_REMOTE_ACCESS_ERROR", "code 2, remote access error"},
		{packet.SyndromeNAKRemoteOperationalError, "NAK_REMOTE_OPERATIONAL_ERROR", "code 3, remote operational error"},
		{packet.SyndromeNAKInvalidRDRequest, "NAK_INVALID_RD_REQUEST", "code 4, invalid RD request"},
		{0x6A, "NAK(code=0x0a)", "reserved code 10"},
		{0x45, "RESERVED_SYNDROME(0x05)", "reserved syndrome type"},
	}
	for _, tt := range tests {
		got := syndromeShort(tt.s)
		assert.Equal(t, tt.short, got, "syndromeShort(%#x) = %q, want %q", uint8(tt.s), got, tt.short)
		got = syndromeMeaning(tt.s)
		assert.Contains(t, got, tt.meaning, "syndromeMeaning(%#x) = %q, want it to say %q", uint8(tt.s), got, tt.meaning)
	}
}
