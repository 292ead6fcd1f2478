package mr

// LocalInvalidate executes a LOCAL_INV work request posted on a QP with protection domain pd: a
// fast-register region goes to the free state, a type 2 window is unbound. The region must have no
// windows bound (ErrMWBound); type 1 windows cannot be invalidated (ErrMWType). Invalidating an
// already free object succeeds. When it returns, no access through the key is in progress, so the
// calling goroutine must not hold a Span on the same region. Allocation-free; bare sentinels.
func (t *Table) LocalInvalidate(pd *PD, qpn uint32, key uint32) error {
	return t.invalidate(pd, qpn, key, false)
}

// RemoteInvalidate executes the invalidation carried by a SEND_WITH_INV (IETH) received on QP qpn
// with protection domain pd. Same rules as LocalInvalidate, and a type 2 window must be associated
// with qpn (ErrMWOtherQP).
func (t *Table) RemoteInvalidate(pd *PD, qpn uint32, key uint32) error {
	return t.invalidate(pd, qpn, key, true)
}

func (t *Table) invalidate(pd *PD, qpn uint32, key uint32, remote bool) error {
	switch {
	case IsMR(key):
		if m := t.mrs.get(KeyIndex(key)); m != nil {
			return m.invalidate(pd, key)
		}
	case IsMW(key):
		if w := t.mws.get(KeyIndex(key)); w != nil {
			return w.invalidate(pd, qpn, key, remote)
		}
	}
	return ErrKeyInvalid
}
