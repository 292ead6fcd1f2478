package cm

import (
	"errors"

	"github.com/gorxe/gorxe/cm/mad"
)

// ErrSIDRRefused is what a *SIDRError matches: the peer answered a SIDR_REQ with a status other
// than success.
var ErrSIDRRefused = errors.New("cm: service ID resolution refused")

// SIDRError is the error of a SIDR_REP whose status is not mad.SIDRSuccess (no listener: status 1,
// "service ID not supported"). It matches ErrSIDRRefused and a *SIDRError with the same status.
type SIDRError struct {
	Status mad.SIDRStatus
}

func (e *SIDRError) Error() string { return "cm: service ID resolution refused: " + e.Status.String() }

// Is reports whether target is ErrSIDRRefused or a *SIDRError with the same status.
func (e *SIDRError) Is(target error) bool {
	if target == ErrSIDRRefused {
		return true
	}
	t, ok := target.(*SIDRError)
	return ok && t.Status == e.Status
}

// SIDRResult returns the error an EventSIDRREPReceived or EventSIDRError carries for the caller of
// ResolveSIDR: nil for a successful SIDR_REP, a *SIDRError for any other status, the timeout of an
// unanswered request.
func SIDRResult(e Event) error {
	switch {
	case e.Type == EventSIDRError:
		return e.Err
	case e.SIDRStatus != mad.SIDRSuccess:
		return &SIDRError{Status: e.SIDRStatus}
	}
	return nil
}
