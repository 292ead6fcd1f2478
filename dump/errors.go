package dump

import (
	"errors"
	"fmt"
)

var (
	// ErrNotCapture means the input is not a pcap or pcapng file.
	ErrNotCapture = errors.New("not a pcap or pcapng capture")

	// ErrTruncatedCapture means the capture file ends, or fails to read,
	// in the middle of a record.
	ErrTruncatedCapture = errors.New("capture file truncated or unreadable")

	// ErrNotRoCE means a frame is not a RoCEv2 packet (not UDP port 4791).
	ErrNotRoCE = errors.New("not a RoCEv2 frame")

	// ErrFrameTruncated means a frame holds fewer bytes than its headers
	// announce, usually because the capture's snap length cut it.
	ErrFrameTruncated = errors.New("frame shorter than its headers announce")

	// ErrUnsupportedLinkType means the capture's link type is not Ethernet,
	// Linux cooked (SLL, SLL2) or raw IP.
	ErrUnsupportedLinkType = errors.New("unsupported link type")
)

// FrameError reports a frame that could not be decoded.
type FrameError struct {
	Frame  int    // 1-based index of the frame in the capture
	Len    int    // bytes captured
	Header string // what was being decoded: "Ethernet", "IPv4", "RoCE", ...
	Err    error  // the cause; errors.Is-able (ErrFrameTruncated, packet.ErrTruncated, ...)
}

func (e *FrameError) Error() string {
	return fmt.Sprintf("frame %d (%d bytes): bad %s: %v", e.Frame, e.Len, e.Header, e.Err)
}

// Unwrap returns e.Err.
func (e *FrameError) Unwrap() error { return e.Err }

// ErrBadFilter means a packet filter names nothing that exists.
var ErrBadFilter = errors.New("bad filter")
