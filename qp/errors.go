package qp

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error returned by this package wraps one of them (test with errors.Is).
var (
	ErrInvalidTransition = errors.New("invalid state transition")
	ErrMissingAttr       = errors.New("required attribute missing")
	ErrExtraAttr         = errors.New("attribute not allowed in this transition")
	ErrCurState          = errors.New("cur_qp_state does not match the QP state")
	ErrSQDraining        = errors.New("send queue still draining; only ERR is allowed")
	ErrInvalidAttr       = errors.New("attribute value out of range")
	ErrNotSupported      = errors.New("not supported")
	ErrInvalidType       = errors.New("invalid QP type")
	ErrInvalidCaps       = errors.New("queue capacities exceed device limits")
	ErrMissingCQ         = errors.New("send or receive CQ missing")
	ErrInvalidState      = errors.New("QP state does not allow posting")
	ErrInvalidOpcode     = errors.New("opcode not allowed for this QP type")
	ErrInvalidWR         = errors.New("malformed work request")
	ErrTooManySGE        = errors.New("more SGEs than the queue's max_sge")
	ErrInlineTooLong     = errors.New("inline data longer than max_inline_data")
	ErrMessageTooLong    = errors.New("message too long (2^31 bytes at most; one MTU for UD)")
	ErrQueueFull         = errors.New("work queue full")
	ErrHasSRQ            = errors.New("QP uses an SRQ; post receives to the SRQ")
	ErrInvalidAH         = errors.New("invalid address handle")
	ErrPDMismatch        = errors.New("object belongs to another protection domain")
	ErrTableFull         = errors.New("no free QP number")
	ErrGSIExists         = errors.New("the GSI QP (QPN 1) already exists")
	ErrDestroyed         = errors.New("object destroyed")
	ErrBusy              = errors.New("object in use")
	ErrStale             = errors.New("queue position no longer outstanding")
	// ErrInvalidPort, ErrInvalidPKeyIndex and ErrInvalidGIDIndex name the out-of-range attribute
	// that points into the port's tables; an *AttrError carrying one also matches ErrInvalidAttr.
	ErrInvalidPort      = errors.New("invalid port number")
	ErrInvalidPKeyIndex = errors.New("invalid P_Key index")
	ErrInvalidGIDIndex  = errors.New("invalid GID index")
)

// ModifyError reports a Modify rejected by the transition rules: an illegal From→To, or an
// attribute mask with required bits Missing or disallowed bits Extra.
type ModifyError struct {
	Type     Type
	From, To State
	Missing  AttrMask
	Extra    AttrMask
	Err      error // ErrInvalidTransition, ErrMissingAttr, ErrExtraAttr, ErrCurState, ErrSQDraining, ErrNotSupported
}

func (e *ModifyError) Error() string {
	s := fmt.Sprintf("%v QP %v->%v: %v", e.Type, e.From, e.To, e.Err)
	if e.Missing != 0 {
		s += " (missing " + e.Missing.String() + ")"
	}
	if e.Extra != 0 {
		s += " (not allowed " + e.Extra.String() + ")"
	}
	return s
}

// Unwrap returns the sentinel.
func (e *ModifyError) Unwrap() error { return e.Err }

// AttrError names an attribute whose value is out of range.
type AttrError struct {
	Name  string // libibverbs field name, e.g. "path_mtu", "ah_attr.grh.sgid_index"
	Value uint64
	Limit string // the rule broken, e.g. "<= 31"
	Err   error  // ErrInvalidAttr, ErrInvalidPort, ErrInvalidPKeyIndex, ErrInvalidGIDIndex, ErrInvalidCaps or ErrNotSupported
}

func (e *AttrError) Error() string {
	return fmt.Sprintf("%v: %s = %d, must be %s", e.Err, e.Name, e.Value, e.Limit)
}

// Unwrap returns the sentinel.
func (e *AttrError) Unwrap() error { return e.Err }

// Is reports a port, P_Key index or GID index out of range as an invalid attribute too, so a
// caller testing for either finds it.
func (e *AttrError) Is(target error) bool {
	return target == ErrInvalidAttr && (e.Err == ErrInvalidPort || e.Err == ErrInvalidPKeyIndex || e.Err == ErrInvalidGIDIndex)
}

func attrErr(name string, value uint64, limit string) error {
	return &AttrError{Name: name, Value: value, Limit: limit, Err: ErrInvalidAttr}
}

// tableErr reports an attribute out of range with the sentinel of the table it indexes.
func tableErr(sentinel error, name string, value uint64, limit string) error {
	return &AttrError{Name: name, Value: value, Limit: limit, Err: sentinel}
}

// PostError reports the work request a post stopped at, like libibverbs' bad_wr: requests before
// Index were posted, Index and after were not.
type PostError struct {
	Op    string // "post_send", "post_recv" or "post_srq_recv"
	Index int
	Err   error
}

// Error names the work request and the cause; the verb (Op) is left to the caller's error, which
// names it once: "work request 3: work queue full".
func (e *PostError) Error() string {
	return fmt.Sprintf("work request %d: %v", e.Index, e.Err)
}

// Unwrap returns the cause.
func (e *PostError) Unwrap() error { return e.Err }
