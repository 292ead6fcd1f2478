package benchout

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, struct {
		A int    `json:"a"`
		B string `json:"b"`
	}{1, "x"}))
	assert.Equal(t, "{\n  \"a\": 1,\n  \"b\": \"x\"\n}\n", b.String())
}

func TestMicros(t *testing.T) {
	assert.Equal(t, "12.35 µs", Micros(12345))
	assert.Equal(t, "0.00 µs", Micros(0))
}
