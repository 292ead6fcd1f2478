package qp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A ring allocates a chunk when a position first reaches it, wraps at its capacity (a multiple of
// the chunk size or not), and never moves a slot it handed out.
func TestSlotsLazy(t *testing.T) {
	tests := []struct {
		n      int
		posts  int
		chunks int // chunks allocated after posts positions were written
	}{
		{n: 128, posts: 0, chunks: 0},
		{n: 128, posts: 1, chunks: 1},
		{n: 128, posts: chunkSlots + 1, chunks: 2},
		{n: 20, posts: 20, chunks: 2},
		{n: 20, posts: 1000, chunks: 2},
		{n: 1, posts: 5, chunks: 1},
	}
	for _, tt := range tests {
		prepared := 0
		s := newSlots(tt.n, func(c *[chunkSlots]int) { prepared++ })
		var first *int
		for pos := range uint64(tt.posts) {
			p := s.at(pos)
			if pos == 0 {
				first = p
			}
			*p = int(pos)
		}
		allocated := 0
		for _, c := range s.chunks {
			if c != nil {
				allocated++
			}
		}
		assert.Equal(t, tt.chunks, allocated, "n=%d posts=%d", tt.n, tt.posts)
		assert.Equal(t, tt.chunks, prepared, "n=%d posts=%d", tt.n, tt.posts)
		assert.Equal(t, tt.n, s.len())
		if tt.posts > 0 {
			require.Same(t, first, s.at(0), "slot 0 moved")
			require.Same(t, first, s.at(uint64(tt.n)), "position n is slot 0 again")
			last := uint64(tt.posts - 1)
			assert.Equal(t, int(last), *s.at(last))
		}
	}
}
