package gorxe

import (
	"errors"
	"strconv"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/qp"
)

// Every error a verb returns is an *Error whose cause matches one of the errors below with
// errors.Is. Their texts are bare ("device closed"): the *Error around them says "gorxe" and the
// verb once.

// Errors of the device and of arguments.
var (
	// ErrInvalidConfig: Open was given an unusable Config; the message names the field.
	ErrInvalidConfig = errors.New("invalid configuration")
	// ErrNoAddresses: the interface has no address a device can bind.
	ErrNoAddresses = errors.New("no usable local address")
	// ErrAddrInUse: Open found the UDP port taken on one of the device's addresses (by another
	// device or another RoCE stack); the error matches syscall.EADDRINUSE too.
	ErrAddrInUse = errors.New("address already in use")
	// ErrDeviceClosed: the device (or the device of the object) was closed.
	ErrDeviceClosed = errors.New("device closed")
	// ErrWrongDevice: an object created on one device was passed to another device's verb.
	ErrWrongDevice = errors.New("object belongs to another device")
	// ErrNilObject: a required object argument (PD, CQ, QP, ...) is nil.
	ErrNilObject = errors.New("nil object")
	// ErrInvalidArgument: a numeric argument out of range; the message names it.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrInUse: the object is still used by others (QPs on a CQ or SRQ, CQs on a channel, a
	// region on a Buffer, ...).
	ErrInUse = errors.New("object in use")
	// ErrInvalidPort: a port number other than 1, the only port of a gorxe device (also in
	// QP attributes and address vectors, where the error matches ErrInvalidAttr too).
	ErrInvalidPort = qp.ErrInvalidPort
	// ErrInvalidGIDIndex: a GID index outside the GID table or naming an unusable entry.
	ErrInvalidGIDIndex = qp.ErrInvalidGIDIndex
	// ErrInvalidPKeyIndex: a P_Key index outside the P_Key table (which holds only 0xFFFF).
	ErrInvalidPKeyIndex = qp.ErrInvalidPKeyIndex
	// ErrDestroyed: the object was already destroyed, deregistered, deallocated or freed (every
	// object type's verbs report it with this one sentinel), or a CQ.Wait or
	// CompChannel.GetEvent ended because its CQ or channel was destroyed.
	ErrDestroyed = qp.ErrDestroyed
)

// Errors of memory registration and memory windows.
var (
	ErrAccessFlags  = mr.ErrAccessFlags  // unknown or inconsistent access flags
	ErrMWBound      = mr.ErrMWBound      // memory windows are still bound to the region
	ErrPDInUse      = mr.ErrPDInUse      // the PD still has regions, windows, QPs, SRQs or AHs
	ErrTableFull    = mr.ErrTableFull    // every MR or MW key index is in use
	ErrPageList     = mr.ErrPageList     // a fast-register page list is invalid
	ErrEmptyRegion  = mr.ErrEmpty        // a zero-length registration
	ErrWrongMRType  = mr.ErrWrongMRType  // a fast-register operation on a user region, or the reverse
	ErrMWType       = mr.ErrMWType       // not allowed for this memory window type
	ErrMWState      = mr.ErrMWState      // a type 2 window is still bound
	ErrZeroBased    = mr.ErrZeroBased    // zero-based addressing not allowed here
	ErrReregFlags   = mr.ErrReregFlags   // empty or unknown rereg flags
	ErrBufferInUse  = mr.ErrBufferInUse  // a Buffer is still registered (matches ErrInUse too)
	ErrBufferSize   = mr.ErrBufferSize   // a Buffer size that is zero, negative or too large
	ErrPDMismatch   = mr.ErrPDMismatch   // region, window and QP are in different PDs
	ErrAccessDenied = mr.ErrAccessDenied // the region lacks a required access right
	ErrOutOfRange   = mr.ErrOutOfRange   // the range is outside the region
	ErrKeyInvalid   = mr.ErrKeyInvalid   // no region or window has the key, or it is stale
)

// Errors of CQs and completion channels.
var (
	ErrInvalidCQSize  = cq.ErrInvalidSize    // a CQ size below 1, above max_cqe, or too small to resize
	ErrCQOverflow     = cq.ErrOverflow       // the CQ overran and is in the error state
	ErrEventsNotAcked = cq.ErrEventsNotAcked // a CQ is destroyed with unacknowledged completion events
	ErrAckTooMany     = cq.ErrAckTooMany     // more completion events acknowledged than received
	ErrNoChannel      = cq.ErrNoChannel      // CQ.Wait on a CQ without a completion channel, which nothing can wake
)

// Errors of QPs, SRQs and AHs.
var (
	ErrInvalidTransition = qp.ErrInvalidTransition // the state change is not in the IBTA table
	ErrMissingAttr       = qp.ErrMissingAttr       // the mask lacks an attribute the transition requires
	ErrExtraAttr         = qp.ErrExtraAttr         // the mask has an attribute the transition does not allow
	ErrCurState          = qp.ErrCurState          // cur_qp_state does not match the QP's state
	ErrSQDraining        = qp.ErrSQDraining        // the send queue is draining; only ERR is allowed
	ErrInvalidAttr       = qp.ErrInvalidAttr       // an attribute value is out of range
	ErrNotSupported      = qp.ErrNotSupported      // the feature is not supported (APM, RD, ...)
	ErrInvalidQPType     = qp.ErrInvalidType       // not RC, UC, UD or GSI
	ErrInvalidCaps       = qp.ErrInvalidCaps       // queue capacities exceed the device limits
	ErrMissingCQ         = qp.ErrMissingCQ         // a QP needs a send and a receive CQ
	ErrInvalidState      = qp.ErrInvalidState      // the QP state does not allow posting
	ErrInvalidOpcode     = qp.ErrInvalidOpcode     // the opcode is not allowed for the QP type
	ErrInvalidWR         = qp.ErrInvalidWR         // a malformed work request
	ErrTooManySGE        = qp.ErrTooManySGE        // more SGEs than the queue's max_sge
	ErrInlineTooLong     = qp.ErrInlineTooLong     // inline data longer than max_inline_data
	ErrMessageTooLong    = qp.ErrMessageTooLong    // a message longer than 2^31 bytes
	ErrQueueFull         = qp.ErrQueueFull         // the work queue is full
	ErrHasSRQ            = qp.ErrHasSRQ            // the QP uses an SRQ: post receives there
	ErrInvalidAH         = qp.ErrInvalidAH         // an invalid address handle or address vector
	ErrGSIExists         = qp.ErrGSIExists         // the device already has its GSI QP
	ErrQPTableFull       = qp.ErrTableFull         // no free QP number
)

// ModifyError details a rejected QP.Modify: the transition and the missing or disallowed
// attributes.
type ModifyError = qp.ModifyError

// AttrError names an attribute whose value is out of range.
type AttrError = qp.AttrError

// PostError names the work request a post stopped at (libibverbs' bad_wr): those before Index
// were posted.
type PostError = qp.PostError

// Error is the error type of every verb: it names the operation (with libibverbs' verb names,
// "reg_mr", "create_qp", "modify_qp", ...) and wraps the cause, which matches one of the
// package's errors with errors.Is.
type Error struct {
	Op  string
	Err error
}

// Error returns "gorxe: <verb>: <cause>", like net.OpError: the package and the verb, then the
// cause, each said once.
func (e *Error) Error() string { return "gorxe: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// opErr wraps err for verb op: an engine's "destroyed" errors become ErrDestroyed so one
// sentinel serves every object type, its "busy" errors also match ErrInUse, and an mr.Error
// gives up its operation name, which op replaces. A nil err stays nil.
func opErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	var me *mr.Error
	if errors.As(err, &me) && me == err {
		err = mrCause{me}
	}
	switch {
	case errors.Is(err, mr.ErrDestroyed), errors.Is(err, cq.ErrDestroyed):
		err = ErrDestroyed
	case errors.Is(err, cq.ErrShutdown):
		err = ErrDeviceClosed
	case errors.Is(err, cq.ErrBusy), errors.Is(err, qp.ErrBusy), errors.Is(err, mr.ErrBufferInUse):
		err = alsoErr{ErrInUse, err}
	}
	return &Error{Op: op, Err: err}
}

// configErr reports an invalid Config field.
func configErr(detail string) error {
	return &Error{Op: "open", Err: detailErr{ErrInvalidConfig, detail}}
}

// argErr reports an out-of-range argument of verb op.
func argErr(op string, sentinel error, detail string) error {
	return &Error{Op: op, Err: detailErr{sentinel, detail}}
}

// detailErr adds a human-readable detail to a sentinel without hiding it from errors.Is.
type detailErr struct {
	sentinel error
	detail   string
}

// Error returns the sentinel's text and the detail.
func (d detailErr) Error() string { return d.sentinel.Error() + ": " + d.detail }

// Unwrap returns the sentinel.
func (d detailErr) Unwrap() error { return d.sentinel }

// alsoErr makes cause match sentinel as well, keeping cause's text and identity: a socket error
// that is also ErrAddrInUse, a specific "in use" error that is also ErrInUse.
type alsoErr struct {
	sentinel error
	cause    error
}

// Error returns the cause's text.
func (a alsoErr) Error() string { return a.cause.Error() }

// Unwrap returns the sentinel and the cause.
func (a alsoErr) Unwrap() []error { return []error{a.sentinel, a.cause} }

// mrCause is an mr.Error under a verb's *Error: the verb names the operation, so the text is the
// key, if any, and the cause.
type mrCause struct{ e *mr.Error }

// Error returns "key 0x105: <cause>", or the cause alone for an error with no key.
func (m mrCause) Error() string {
	if m.e.Key == 0 {
		return m.e.Err.Error()
	}
	return "key 0x" + strconv.FormatUint(uint64(m.e.Key), 16) + ": " + m.e.Err.Error()
}

// Unwrap returns the mr.Error.
func (m mrCause) Unwrap() error { return m.e }
