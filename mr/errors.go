package mr

import (
	"errors"
	"strconv"
)

// Data-path errors. Each names one check so the transport can map it to the IBTA outcome
// (remote access error NAK, local protection error, invalid request for misaligned atomics, ...).
var (
	// ErrKeyInvalid: no object has this key's index, or the variant is stale.
	ErrKeyInvalid = errors.New("key does not exist or is stale")
	// ErrPDMismatch: the key belongs to a different protection domain than the QP.
	ErrPDMismatch = errors.New("protection domain mismatch")
	// ErrAccessDenied: the region or window lacks a required access right.
	ErrAccessDenied = errors.New("access right missing")
	// ErrOutOfRange: the byte range is not inside the region or window.
	ErrOutOfRange = errors.New("range outside region")
	// ErrMisaligned: an atomic target address is not 8-byte aligned.
	ErrMisaligned = errors.New("atomic target not 8-byte aligned")
	// ErrMWNotBound: the window is not bound to a region.
	ErrMWNotBound = errors.New("memory window not bound")
	// ErrMWOtherQP: a type 2 window is used or invalidated through a QP it is not associated with.
	ErrMWOtherQP = errors.New("memory window bound to another QP")
	// ErrMRInvalidState: a fast-register region is in the invalid (free) state.
	ErrMRInvalidState = errors.New("region in invalid (free) state")
	// ErrLength: a scatter or gather is longer than the remaining SGE list.
	ErrLength = errors.New("length exceeds scatter/gather list")
)

// Control errors: misuse of registration, fast registration, bind and invalidation.
var (
	// ErrAccessFlags: unknown or inconsistent access flags for the operation.
	ErrAccessFlags = errors.New("invalid access flags")
	// ErrMWBound: the region still has memory windows bound to it.
	ErrMWBound = errors.New("memory windows are bound to the region")
	// ErrPDInUse: the protection domain still has objects.
	ErrPDInUse = errors.New("protection domain in use")
	// ErrInvalidPD: nil protection domain, or one from another table.
	ErrInvalidPD = errors.New("invalid protection domain")
	// ErrDestroyed: the object was already deregistered, deallocated or freed.
	ErrDestroyed = errors.New("object destroyed")
	// ErrTableFull: every index of the key range is in use.
	ErrTableFull = errors.New("key table full")
	// ErrPageSize: the page size is not a supported power of two.
	ErrPageSize = errors.New("unsupported page size")
	// ErrPageList: a page list is empty, too long, has a wrong page length, or does not cover the length.
	ErrPageList = errors.New("invalid page list")
	// ErrEmpty: a registration of zero bytes.
	ErrEmpty = errors.New("zero-length registration")
	// ErrWrongMRType: a fast-register operation on a user region or the reverse.
	ErrWrongMRType = errors.New("wrong memory region type")
	// ErrMRNotFree: fast registration of a region that is still valid (LOCAL_INV it first).
	ErrMRNotFree = errors.New("region not in free state")
	// ErrKeyIndex: a new key whose index differs from the object's.
	ErrKeyIndex = errors.New("new key has a different index")
	// ErrMWType: the operation is not allowed for this memory window type.
	ErrMWType = errors.New("operation not allowed for memory window type")
	// ErrMWState: a type 2 window bind while the window is still bound.
	ErrMWState = errors.New("memory window not in free state")
	// ErrZeroBased: a zero-based bind of a type 1 window, or a bind to a zero-based region.
	ErrZeroBased = errors.New("zero-based addressing not allowed here")
	// ErrReregFlags: rereg flags empty or unknown.
	ErrReregFlags = errors.New("invalid rereg flags")
	// ErrBufferInUse: a buffer is still referenced by a registration.
	ErrBufferInUse = errors.New("buffer still registered")
	// ErrBufferSize: a buffer size that is zero, negative or too large.
	ErrBufferSize = errors.New("invalid buffer size")
)

// Error is returned by verbs-style control calls. It names the operation and the key and wraps
// one of the package's sentinels, so errors.Is works.
type Error struct {
	Op  string // "reg_mr", "rereg_mr", "dereg_mr", "alloc_mr", "alloc_mw", "dealloc_mw", "dealloc_pd", ...
	Key uint32 // the object's key, 0 when there is none yet
	Err error
}

// Error formats the operation, the key if there is one, and the cause:
// "dereg_mr key 0x105: memory windows are bound to the region".
func (e *Error) Error() string {
	s := e.Op
	if e.Key != 0 {
		s += " key 0x" + strconv.FormatUint(uint64(e.Key), 16)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

func opErr(op string, key uint32, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Key: key, Err: err}
}
