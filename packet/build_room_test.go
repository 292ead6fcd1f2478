package packet

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// AppendPacketRoom must produce, once the payload is written in place, exactly the bytes
// AppendPacket produces, even in a reused buffer full of stale bytes.
func TestAppendPacketRoomMatchesAppendPacket(t *testing.T) {
	h := Headers{BTH: BTHFields{Opcode: RCRDMAWriteFirst, PKey: 0xFFFF, DestQP: 0x11, PSN: 7},
		RETH: RETHFields{VirtualAddress: 0x1000, RKey: 0x1234, DMALength: 5000}}
	payload := []byte("seven b") // 7 bytes: one pad byte
	want, err := AppendPacket(nil, &h, payload)
	require.NoError(t, err)
	stale := bytes.Repeat([]byte{0xAA}, 256)
	pkt, room, err := AppendPacketRoom(stale[:0], &h, len(payload))
	require.NoError(t, err)
	require.Len(t, room, len(payload), "payload room has length %d at the wrong place", len(room))
	require.Same(t, &pkt[RCRDMAWriteFirst.HeaderLen()], &room[0], "payload room has length %d at the wrong place", len(room))
	copy(room, payload)
	assert.Equal(t, want, pkt, "AppendPacketRoom + copy = % x\nwant % x", pkt, want)
	if _, _, err := AppendPacketRoom(nil, &h, -1); !errors.Is(err, ErrBadPayloadLength) {
		assert.Fail(t, fmt.Sprintf("negative payload length: err = %v", err))
	}
}
