package rdmacm

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/gorxe/gorxe"
)

// Errors of this package; match them with errors.Is. A rejection by the peer matches
// cm.ErrRejected and carries the reason as a *cm.RejectError; a peer that never answers
// matches cm.ErrTimeout. A call on a device that is closed, or that closes while the call
// waits, returns an error matching gorxe.ErrDeviceClosed that names the call (dial, listen,
// accept, ...).
var (
	// ErrClosed: the listener, connection or agent was closed.
	ErrClosed = errors.New("rdmacm: closed")
	// ErrAddress: an address that the device cannot use (no local GID of its family, port 0 for
	// Dial, a listener address the device does not own).
	ErrAddress = errors.New("rdmacm: unusable address")
	// ErrOptions: Options that contradict each other.
	ErrOptions = errors.New("rdmacm: invalid options")
	// ErrECEVendor: the peer answered with another vendor's ECE (Options.CheckECEVendor).
	ErrECEVendor = errors.New("rdmacm: the peer's ECE names another vendor")
)

// closedErr reports a call that found the device closed as a failure of that call ("rdmacm:
// dial 10.0.0.2:7174: gorxe: device closed"), whichever verb underneath noticed it first
// (alloc_pd, create_qp, ...). Other errors pass unchanged.
func closedErr(op string, addr netip.AddrPort, err error) error {
	if !errors.Is(err, gorxe.ErrDeviceClosed) {
		return err
	}
	return fmt.Errorf("rdmacm: %s %v: %w", op, addr, gorxe.ErrDeviceClosed)
}

// RejectedError is how Dial fails when the peer refuses: it wraps the reason (a *cm.RejectError,
// so errors.As and errors.Is see it) and carries the REJ's private data (rdma_reject's), which
// CM messages zero-pad to their full area.
type RejectedError struct {
	Err         error
	PrivateData []byte
}

func (e *RejectedError) Error() string { return e.Err.Error() }

// Unwrap returns the reason.
func (e *RejectedError) Unwrap() error { return e.Err }
