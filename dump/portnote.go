package dump

import (
	"io"
	"strconv"
	"strings"

	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// PortNote is how a pcapng capture says which UDP port carries its RoCEv2
// packets when it is not 4791: a line of the section header's or an
// interface's comment (opt_comment) reading PortNote, "=" and the port,
// "gorxe udp-port=5000". Several lines name several ports. Readers reading
// such a capture decode RoCEv2 on the ports it names; other tools show the
// note as the capture's comment. Classic pcap files have no place for it:
// give the port to the reader instead (`gorxe dump -port`).
const PortNote = "gorxe udp-port"

// PortComment returns the comment line that announces port: PortNote=port.
func PortComment(port uint16) string {
	return PortNote + "=" + strconv.FormatUint(uint64(port), 10)
}

// CommentPorts returns the ports the PortNote lines of a pcapng comment
// name, in order; lines that are not notes, or name no valid port, are
// ignored.
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

// NewNgWriter returns a pcapng writer of frames of link type lt whose one
// interface's comment announces that RoCEv2 travels on UDP port port, so
// `gorxe dump` decodes the capture without being told. Call Flush when done.
func NewNgWriter(w io.Writer, lt gplayers.LinkType, port uint16) (*pcapgo.NgWriter, error) {
	intf := pcapgo.NgInterface{
		Name:                "gorxe",
		Comment:             PortComment(port),
		LinkType:            lt,
		SnapLength:          0, // no limit
		TimestampResolution: 9,
	}
	return pcapgo.NewNgWriterInterface(w, intf, pcapgo.NgWriterOptions{
		SectionInfo: pcapgo.NgSectionInfo{Application: "gorxe"},
	})
}
