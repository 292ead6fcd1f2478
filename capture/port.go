package capture

import (
	"strconv"
	"strings"
)

// PortNote is how a pcapng capture says which UDP port carries its RoCEv2 packets when it is not
// 4791: a line of the section header's or an interface's comment (opt_comment) reading PortNote,
// "=" and the port, e.g. "gorxe udp-port=5000". Several lines name several ports. gorxe dump and
// gorxe trace decode RoCEv2 on the ports a capture names; other tools show the note as the
// capture's comment. Classic pcap files have no place for it: give their port to the reader.
const PortNote = "gorxe udp-port"

// PortComment returns the comment line that announces port: PortNote=port.
func PortComment(port uint16) string {
	return PortNote + "=" + strconv.FormatUint(uint64(port), 10)
}

// CommentPorts returns the ports the PortNote lines of a pcapng comment name, in order; lines
// that are not notes, or name no valid port, are ignored.
func CommentPorts(comment string) []uint16 {
	var ports []uint16
	for line := range strings.Lines(comment) {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), PortNote+"=")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(v, 10, 16); err == nil && n != 0 {
			ports = append(ports, uint16(n))
		}
	}
	return ports
}
