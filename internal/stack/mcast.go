package stack

import (
	"fmt"
	"net/netip"
	"slices"
	"sync"

	"github.com/gorxe/gorxe/netio"
)

// MaxMcastQPAttach is rxe's max_mcast_qp_attach: QPs per multicast group.
const MaxMcastQPAttach = 56

// groups records which QPs joined which multicast group (by IP address, the GID a RoCE group
// has). The device's network joins a group when its first QP attaches and leaves it when the last
// detaches, as rxe adds a group's MAC filter on the first attach and drops it with the last; on
// the UDP backend that is an IP membership, announced with IGMP or MLD.
type groups struct {
	mu   sync.RWMutex
	m    map[netip.Addr][]*QP
	conn netio.Conn
}

func (t *groups) init(conn netio.Conn) {
	t.m = make(map[netip.Addr][]*QP)
	t.conn = conn
}

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
	case len(m) == 0:
		if err := netio.JoinGroup(t.conn, group); err != nil {
			return fmt.Errorf("%w: %w", ErrJoin, err)
		}
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
	t.remove(group, m, i)
	return nil
}

// remove takes the i'th QP out of group, whose members are m, and leaves the group on the
// network after its last QP. The caller holds the lock.
func (t *groups) remove(group netip.Addr, m []*QP, i int) {
	if n := slices.Delete(slices.Clone(m), i, i+1); len(n) > 0 {
		t.m[group] = n
		return
	}
	delete(t.m, group)
	// A failure leaves a membership behind that only the device's close ends; nothing else
	// can be done about it, and the QP is detached either way.
	_ = netio.LeaveGroup(t.conn, group)
}

// leaveAll removes h from every group.
func (t *groups) leaveAll(h *QP) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for g, m := range t.m {
		if i := slices.Index(m, h); i >= 0 {
			t.remove(g, m, i)
		}
	}
}
