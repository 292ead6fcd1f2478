package trace

import (
	"errors"
	"fmt"
)

var (
	// ErrNoPackets means the capture holds no RoCEv2 packet that the filters let through.
	ErrNoPackets = errors.New("no RoCEv2 packets to draw")

	// ErrOutputFormat means the output file's name ends in neither .svg nor .html.
	ErrOutputFormat = errors.New("output name must end in .svg or .html")

	// ErrUsage means the command line is wrong.
	ErrUsage = errors.New("bad command line")
)

// CaptureError reports a capture that cannot be read: not a pcap or pcapng file, or cut
// short in the middle of a record (the frames before the cut are not drawn either, since a
// partial ladder would hide the cut).
type CaptureError struct {
	Frame int   // frames read before the failure
	Err   error // the cause; errors.Is-able (dump.ErrNotCapture, dump.ErrTruncatedCapture)
}

func (e *CaptureError) Error() string {
	return fmt.Sprintf("capture unreadable after frame %d: %v", e.Frame, e.Err)
}

// Unwrap returns e.Err.
func (e *CaptureError) Unwrap() error { return e.Err }
