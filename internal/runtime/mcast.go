package runtime

import (
	"net/netip"
	"slices"
	"sync"
)

// MaxMcastQPAttach is rxe's max_mcast_qp_attach: QPs per multicast group.
const MaxMcastQPAttach = 56

// groups records which QPs joined which multicast group (by IP address, the GID a RoCE group
// has).
type groups struct {
	mu sync.RWMutex
	m  map[netip.Addr][]*QP
}

func (t *groups) init() { t.m = make(map[netip.Addr][]*QP) }

// members returns the QPs attached to group. The slice is shared: callers must not modify it.
func (t *groups) members(group netip.Addr) []*QP {
	t.mu.RLock()
	m := t.m[group]
	t.mu.RUnlock()
	return m
}

// attach adds h to group. The limit is checked under the same lock as the insertion, so
// concurrent attaches cannot exceed it.
func (t *groups) attach(group netip.Addr, h *QP) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.m[group]
	switch {
	case slices.Contains(m, h):
		return ErrAttached
	case len(m) >= MaxMcastQPAttach:
		return ErrGroupFull
	}
	// Copy on write: members hands the old slice to the receive path without a lock.
	t.m[group] = append(slices.Clip(m), h)
	return nil
}

// detach removes h from group.
func (t *groups) detach(group netip.Addr, h *QP) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.m[group]
	i := slices.Index(m, h)
	if i < 0 {
		return ErrNotAttached
	}
	if n := slices.Delete(slices.Clone(m), i, i+1); len(n) > 0 {
		t.m[group] = n
	} else {
		delete(t.m, group)
	}
	return nil
}

// leaveAll removes h from every group.
func (t *groups) leaveAll(h *QP) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for g, m := range t.m {
		if i := slices.Index(m, h); i >= 0 {
			if n := slices.Delete(slices.Clone(m), i, i+1); len(n) > 0 {
				t.m[g] = n
			} else {
				delete(t.m, g)
			}
		}
	}
}
