package perftest

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Over RDMA-CM a key message is perftest's struct pingpong_dest with big-endian integers and the
// padding after rkey; the reader takes what perftest's rdma_read_keys takes.
func TestKeyCM(t *testing.T) {
	d := Dest{LID: 0, OutReads: 16, QPN: 0x11, PSN: 0xabcdef, RKey: 0x3ac, VAddr: 0x7fd0a7663000,
		GID: GIDFromString(t, "127.10.200.1"), SRQN: 0, GIDIndex: 1}
	b := AppendKeyCM(nil, &d)
	want := "00000000" + "00000010" + "00000011" + "00abcdef" + "000003ac" + "00000000" + "00007fd0a7663000" +
		"00000000000000000000ffff7f0ac801" + "00000000" + "00000001"
	assert.Equal(t, want, hex.EncodeToString(b))
	got, err := ParseKeyCM(b)
	require.NoError(t, err)
	d.GIDIndex = 0 // not read, as perftest does not read it
	assert.Equal(t, d, got)

	var zero Dest
	assert.Equal(t, make([]byte, KeyLenCM), AppendKeyCM(nil, &zero), "the barriers around -R's connections")
	_, err = ParseKeyCM(b[:KeyLenCM-1])
	assert.ErrorIs(t, err, ErrBadMessage)
}
