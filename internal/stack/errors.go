package stack

import "errors"

// Errors of the stack; the facade maps them onto its own.
var (
	// ErrClosed: the stack was closed; nothing runs any more.
	ErrClosed = errors.New("stack closed")
	// ErrAttached: the QP is already attached to the multicast group.
	ErrAttached = errors.New("QP already attached to the group")
	// ErrNotAttached: the QP is not attached to the multicast group.
	ErrNotAttached = errors.New("QP not attached to the group")
	// ErrGroupFull: the multicast group has MaxMcastQPAttach QPs.
	ErrGroupFull = errors.New("multicast group full")
	// ErrJoin: the network could not join the multicast group (the kernel refused the
	// membership); it wraps the network's error.
	ErrJoin = errors.New("cannot join the multicast group on the network")
)
