package capture

import (
	"fmt"
	"strconv"
	"strings"
)

// portKey is the key of the interface comment that names the RoCEv2 UDP port of a capture.
const portKey = "gorxe udp-port="

// PortComment returns the pcapng interface comment that records the UDP port RoCE runs on in a
// capture, e.g. "gorxe udp-port=4791".
func PortComment(port uint16) string { return fmt.Sprintf("%s%d", portKey, port) }

// ParsePortComment returns the port a comment written by [PortComment] names, and false for any
// other comment.
func ParsePortComment(comment string) (uint16, bool) {
	for line := range strings.SplitSeq(comment, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), portKey)
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(rest, 10, 16)
		if err != nil || p == 0 {
			return 0, false
		}
		return uint16(p), true
	}
	return 0, false
}
