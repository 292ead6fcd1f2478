package cm

import (
	"errors"

	"github.com/gorxe/gorxe/cm/mad"
)

// Errors returned by the Manager's commands and carried by events. Match
// them with errors.Is.
var (
	// ErrUnknownConn means no connection has the given ID (it never existed,
	// or it has gone back to Idle or left Timewait).
	ErrUnknownConn = errors.New("cm: unknown connection")

	// ErrState means the command is not allowed in the connection's state
	// (accepting twice, disconnecting before the connection is established...).
	ErrState = errors.New("cm: command not allowed in the connection's state")

	// ErrServiceIDInUse means a listener already holds the service ID.
	ErrServiceIDInUse = errors.New("cm: service ID already has a listener")

	// ErrNoListener means Unlisten was given a service ID nobody listens on.
	ErrNoListener = errors.New("cm: no listener for the service ID")

	// ErrTooManyConns means the manager holds Config.MaxConns connections.
	ErrTooManyConns = errors.New("cm: too many connections")

	// ErrInvalidParam means a parameter is out of range (a QPN wider than
	// 24 bits, an invalid MTU, a transport other than RC or UC, an ECE vendor
	// ID wider than 24 bits).
	ErrInvalidParam = errors.New("cm: invalid parameter")

	// ErrTimeout means the peer never answered: every retransmission of a
	// REQ, REP, DREQ or SIDR_REQ went unanswered.
	ErrTimeout = errors.New("cm: peer did not respond")

	// ErrRejected is what a *RejectError matches.
	ErrRejected = errors.New("cm: connection rejected")

	// ErrPrivateDataTooLong is mad.ErrPrivateDataTooLong: private data that
	// does not fit the message.
	ErrPrivateDataTooLong = mad.ErrPrivateDataTooLong
)

// RejectError is the error of an [EventRejected]: the peer sent a REJ with
// this reason. It matches ErrRejected.
type RejectError struct {
	Reason mad.RejectReason
}

func (e *RejectError) Error() string { return "cm: connection rejected: " + e.Reason.String() }

// Is reports whether target is ErrRejected or a *RejectError with the same
// reason.
func (e *RejectError) Is(target error) bool {
	if target == ErrRejected {
		return true
	}
	t, ok := target.(*RejectError)
	return ok && t.Reason == e.Reason
}
