package cq

import "errors"

// Errors returned by CQ and CompChannel methods; test for them with errors.Is.
var (
	// ErrInvalidSize: a CQ's requested number of entries is below 1 or above MaxCQE, or a resize
	// would not hold the completions already queued.
	ErrInvalidSize = errors.New("invalid number of CQ entries")
	// ErrOverflow: a completion found the CQ full. The CQ is in the error state from then on
	// (IBTA class G); completions already queued can still be polled.
	ErrOverflow = errors.New("completion queue overrun")
	// ErrDestroyed: the CQ or completion channel was destroyed.
	ErrDestroyed = errors.New("object destroyed")
	// ErrBusy: the object is still in use (QPs attached to a CQ, CQs attached to a channel).
	ErrBusy = errors.New("object in use")
	// ErrEventsNotAcked: a CQ is destroyed while completion events returned by GetEvent have not
	// all been acknowledged with AckEvents (libibverbs would block in ibv_destroy_cq instead).
	ErrEventsNotAcked = errors.New("completion events not acknowledged")
	// ErrShutdown: the owner of the completion channel shut it down (its device was closed).
	ErrShutdown = errors.New("completion channel shut down")
	// ErrNoChannel: Wait on a CQ created without a completion channel, which nothing can wake.
	ErrNoChannel = errors.New("CQ has no completion channel")
	// ErrAckTooMany: AckEvents acknowledged more events than GetEvent returned for the CQ.
	ErrAckTooMany = errors.New("more events acknowledged than received")
)
