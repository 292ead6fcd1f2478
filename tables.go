package gorxe

import (
	"slices"
	"sync"
)

// mcastTable records which QPs joined which multicast group.
type mcastTable struct {
	mu     sync.RWMutex
	groups map[GID][]*qpCore
}

func (t *mcastTable) init() { t.groups = make(map[GID][]*qpCore) }

// members returns the QPs attached to group. The slice is shared: callers must not modify it.
func (t *mcastTable) members(group GID) []*qpCore {
	t.mu.RLock()
	m := t.groups[group]
	t.mu.RUnlock()
	return m
}

// attach adds c to group; it reports false if c was already attached.
func (t *mcastTable) attach(group GID, c *qpCore) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.groups[group]
	if slices.Contains(m, c) {
		return false
	}
	// Copy on write: members hands the old slice to the receive path without a lock.
	t.groups[group] = append(slices.Clip(m), c)
	return true
}

// detach removes c from group; it reports false if c was not attached.
func (t *mcastTable) detach(group GID, c *qpCore) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.groups[group]
	i := slices.Index(m, c)
	if i < 0 {
		return false
	}
	n := slices.Delete(slices.Clone(m), i, i+1)
	if len(n) == 0 {
		delete(t.groups, group)
	} else {
		t.groups[group] = n
	}
	return true
}

// groupsOf returns the groups c is attached to.
func (t *mcastTable) groupsOf(c *qpCore) []GID {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []GID
	for g, m := range t.groups {
		if slices.Contains(m, c) {
			out = append(out, g)
		}
	}
	return out
}
