package counter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTableComplete(t *testing.T) {
	seen := map[string]ID{}
	for id := range NumIDs {
		d := id.Desc()
		require.NotEmpty(t, d.Name, "counter %d has no name", id)
		require.NotEmpty(t, d.Help, "counter %s has no help", d.Name)
		prev, dup := seen[d.Name]
		require.False(t, dup, "name %s used by %d and %d", d.Name, prev, id)
		seen[d.Name] = id
		got, ok := ByName(d.Name)
		require.True(t, ok)
		assert.Equal(t, id, got)
	}
	assert.Empty(t, NumIDs.Name())
	_, ok := ByName("no_such_counter")
	assert.False(t, ok)
}

func TestSetSnapshotFold(t *testing.T) {
	var a, retired Set
	a.Inc(SentPkts)
	a.Add(RcvdBytes, 40)
	s := a.Snapshot()
	assert.Equal(t, uint64(1), s.Get(SentPkts))
	assert.Equal(t, uint64(40), s.Get(RcvdBytes))

	a.Fold(&retired)
	a.Fold(&retired)
	assert.Equal(t, uint64(2), retired.Load(SentPkts))
	assert.Equal(t, uint64(80), retired.Load(RcvdBytes))

	var sum Snapshot
	a.AddTo(&sum)
	retired.AddTo(&sum)
	assert.Equal(t, uint64(3), sum.Get(SentPkts))

	n := 0
	for id, v := range s.All() {
		assert.Equal(t, s[id], v)
		n++
	}
	assert.Equal(t, int(NumIDs), n)
}

func TestSetNoAllocs(t *testing.T) {
	var s Set
	allocs := testing.AllocsPerRun(100, func() {
		s.Inc(RcvdPkts)
		_ = s.Snapshot()
	})
	assert.Zero(t, allocs)
}
