package gorxe

import (
	"errors"
	"strings"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/qp"
)

// Errors of the root package. Every error a verb returns matches one of these, or one of the
// re-exported errors below, with errors.Is.
var (
	// ErrInvalidConfig: Open was given an unusable Config; the message names the field.
	ErrInvalidConfig = errors.New("gorxe: invalid configuration")
	// ErrNoAddresses: the interface has no address a device can bind.
	ErrNoAddresses = errors.New("gorxe: no usable local address")
	// ErrDeviceClosed: the device (or the device of the object) was closed.
	ErrDeviceClosed = errors.New("gorxe: device closed")
	// ErrWrongDevice: an object created on one device was passed to another device's verb.
	ErrWrongDevice = errors.New("gorxe: object belongs to another device")
	// ErrNilObject: a required object argument (PD, CQ, QP, ...) is nil.
	ErrNilObject = errors.New("gorxe: nil object")
	// ErrInvalidPort: a port number other than 1, the only port of a gorxe device (also in
	// QP attributes and address vectors, where the error matches ErrInvalidAttr too).
	ErrInvalidPort = qp.ErrInvalidPort
	// ErrInvalidGIDIndex: a GID index outside the GID table or naming an unusable entry.
	ErrInvalidGIDIndex = qp.ErrInvalidGIDIndex
	// ErrInvalidPKeyIndex: a P_Key index outside the P_Key table (which holds only 0xFFFF).
	ErrInvalidPKeyIndex = qp.ErrInvalidPKeyIndex
	// ErrInvalidArgument: a numeric argument out of range; the message names it.
	ErrInvalidArgument = errors.New("gorxe: invalid argument")
	// ErrInUse: the object is still used by others (QPs on a CQ or SRQ, MRs on a PD, ...).
	ErrInUse = errors.New("gorxe: object in use")
	// ErrAddrInUse: Open found the UDP port taken on one of the device's addresses (by another
	// device or another RoCE stack); the error matches syscall.EADDRINUSE too.
	ErrAddrInUse = errors.New("gorxe: address already in use")
)

// ErrDestroyed: the object was already destroyed, deregistered or deallocated. It is the queue pair
// package's sentinel, which AH.Destroy returns directly; the other objects' verbs map their own
// "destroyed" errors onto it.
var ErrDestroyed = qp.ErrDestroyed

// Errors of memory registration and memory windows, re-exported so users need import only gorxe.
var (
	ErrAccessFlags    = mr.ErrAccessFlags    // unknown or inconsistent access flags
	ErrMWBound        = mr.ErrMWBound        // memory windows are still bound to the region
	ErrPDInUse        = mr.ErrPDInUse        // the PD still has regions, windows, QPs, SRQs or AHs
	ErrTableFull      = mr.ErrTableFull      // every MR or MW key index is in use
	ErrPageList       = mr.ErrPageList       // a fast-register page list is invalid
	ErrEmptyRegion    = mr.ErrEmpty          // a zero-length registration
	ErrWrongMRType    = mr.ErrWrongMRType    // a fast-register operation on a user region, or the reverse
	ErrMWType         = mr.ErrMWType         // not allowed for this memory window type
	ErrMWState        = mr.ErrMWState        // a type 2 window is still bound
	ErrZeroBased      = mr.ErrZeroBased      // zero-based addressing not allowed here
	ErrReregFlags     = mr.ErrReregFlags     // empty or unknown rereg flags
	ErrBufferInUse    = mr.ErrBufferInUse    // a Buffer is still registered
	ErrBufferSize     = mr.ErrBufferSize     // a Buffer size that is zero, negative or too large
	ErrPDMismatch     = mr.ErrPDMismatch     // region, window and QP are in different PDs
	ErrAccessDenied   = mr.ErrAccessDenied   // the region lacks a required access right
	ErrOutOfRange     = mr.ErrOutOfRange     // the range is outside the region
	ErrKeyInvalid     = mr.ErrKeyInvalid     // no region or window has the key, or it is stale
	ErrInvalidCQSize  = cq.ErrInvalidSize    // a CQ size below 1, above max_cqe, or too small to resize
	ErrCQOverflow     = cq.ErrOverflow       // the CQ overran and is in the error state
	ErrEventsNotAcked = cq.ErrEventsNotAcked // a CQ is destroyed with unacknowledged completion events
	ErrAckTooMany     = cq.ErrAckTooMany     // more completion events acknowledged than received
)

// Error is the error type of every verb: it names the operation (with libibverbs' verb names,
// "reg_mr", "create_qp", "modify_qp", ...) and wraps the cause, which matches one of the
// package's errors with errors.Is.
type Error struct {
	Op  string
	Err error
}

// Error returns "gorxe: <verb>: <cause>", saying each thing once: the internal packages' names
// and the verb or sentinel texts a cause repeats are left out.
func (e *Error) Error() string {
	parts := strings.Split(e.Err.Error(), ": ")
	out := make([]string, 0, len(parts)+2)
	out = append(out, "gorxe", e.Op)
	for _, p := range parts {
		switch p {
		case "gorxe", "qp", "mr", "cq", out[len(out)-1]:
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ": ")
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// opErr wraps err for verb op, mapping the internal packages' "destroyed" errors onto
// ErrDestroyed so one sentinel serves every object type. A nil err stays nil.
func opErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	if errors.Is(err, mr.ErrDestroyed) || errors.Is(err, cq.ErrDestroyed) {
		err = ErrDestroyed
	} else if errors.Is(err, cq.ErrShutdown) {
		err = ErrDeviceClosed
	} else if errors.Is(err, cq.ErrBusy) || errors.Is(err, qp.ErrBusy) {
		err = detailErr{ErrInUse, err.Error()}
	} else if errors.Is(err, mr.ErrBufferInUse) {
		err = alsoErr{ErrInUse, err}
	}
	return &Error{Op: op, Err: err}
}

// trimPrefix drops the "gorxe: " of the root sentinels from a detail.
func trimPrefix(s string) string {
	const p = "gorxe: "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
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
func (d detailErr) Error() string { return trimPrefix(d.sentinel.Error()) + ": " + d.detail }

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
