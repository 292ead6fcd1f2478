package perftest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// A cqSet gives every QP a CQ with room for all it can complete, whatever the QP count: one CQ
// while depth × QPs fits in gorxe.MaxCQE, then as many as it takes.
func TestCQSetHoldsEveryQPsCompletions(t *testing.T) {
	dev, _ := fabricPair(t)
	for _, tc := range []struct{ nq, depth, cqs int }{
		{1, 128, 1},
		{63, 512, 1},
		{64, 512, 2}, // one more than 32767 entries: where one CQ of depth × QPs would overrun
		{1024, 512, 17},
		{1024, 128, 5},
		{3, gorxe.MaxCQE, 3},
	} {
		s, err := newCQSet(dev, tc.nq, tc.depth, nil)
		require.NoError(t, err)
		assert.Len(t, s.cqs, tc.cqs, "%d QPs of depth %d", tc.nq, tc.depth)
		need := map[*gorxe.CQ]int{}
		for q := range tc.nq {
			need[s.of(q)] += tc.depth
		}
		require.Len(t, need, len(s.cqs), "every CQ has QPs")
		for c, n := range need {
			assert.GreaterOrEqual(t, c.CQE(), n, "%d QPs of depth %d", tc.nq, tc.depth)
		}
		require.NoError(t, s.destroy())
	}
}
