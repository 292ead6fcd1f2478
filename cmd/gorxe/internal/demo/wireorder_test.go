package demo

import (
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/gorxe/gorxe/packet"
)

// narratedPacket is one packet line of the narration.
type narratedPacket struct {
	frame    int
	src, dst netip.AddrPort
	opcode   string
	dqpn     string
	psn      packet.PSN
	rest     string // flags, fields and notes after the PSN
}

var packetLine = regexp.MustCompile(`^[AB]→[AB]  #(\d+) (\S+) > (\S+) ([A-Z_]+) dqpn=0x([0-9a-f]{6}) psn=(\d+)(.*)$`)

// parsePacketLine parses a narrated packet line, reporting false for any other line.
func parsePacketLine(l string) (narratedPacket, bool) {
	m := packetLine.FindStringSubmatch(strings.TrimSpace(l))
	if m == nil {
		return narratedPacket{}, false
	}
	frame, _ := strconv.Atoi(m[1])
	src, err1 := netip.ParseAddrPort(m[2])
	dst, err2 := netip.ParseAddrPort(m[3])
	psn, err3 := strconv.ParseUint(m[6], 10, 24)
	if err1 != nil || err2 != nil || err3 != nil {
		return narratedPacket{}, false
	}
	return narratedPacket{frame: frame, src: src, dst: dst, opcode: m[4], dqpn: m[5], psn: packet.PSN(psn), rest: m[7]}, true
}

// checkWireOrder checks the narration against what a sender can do on the wire: each sender's
// PSNs (its requests, and separately its responses) never go back, except on a packet marked as
// sent before (a retransmission, an acknowledgement repeated, or one the faults held back), and
// such a packet repeats a PSN already narrated on that connection; a copy the faults duplicated
// repeats the packet just before it. A packet narrated after one
// its sender put on the wire later breaks the first rule without a real resend to explain it.
func checkWireOrder(lines []string) error {
	type streamID struct {
		src       netip.AddrPort
		dqpn      string
		responses bool
	}
	type pair struct{ lo, hi netip.Addr }
	high := map[streamID]packet.PSN{}
	last := map[streamID]packet.PSN{}
	seen := map[pair]map[packet.PSN]bool{}
	for _, l := range lines {
		p, ok := parsePacketLine(l)
		if !ok || strings.Contains(p.rest, "CORRUPTED") {
			continue // a flipped bit may be in the PSN itself
		}
		c := pair{p.src.Addr(), p.dst.Addr()}
		if c.hi.Less(c.lo) {
			c.lo, c.hi = c.hi, c.lo
		}
		if seen[c] == nil {
			seen[c] = map[packet.PSN]bool{}
		}
		k := streamID{p.src, p.dqpn, strings.Contains(p.opcode, "RESPONSE") || strings.Contains(p.opcode, "ACKNOWLEDGE")}
		resent := strings.Contains(p.rest, noteRetransmission) || strings.Contains(p.rest, noteAckAgain)
		h, started := high[k]
		copied := strings.Contains(p.rest, "DUPLICATE") && last[k] == p.psn
		switch {
		case started && p.psn.LessThan(h) && !resent && !copied && !strings.Contains(p.rest, "DELAYED"):
			return fmt.Errorf("frame #%d: %s psn=%d after psn=%d, not marked as sent before: %s", p.frame, p.opcode, p.psn, h, l)
		case resent && !seen[c][p.psn]:
			return fmt.Errorf("frame #%d: marked as sent before, but psn=%d was never narrated on this connection: %s", p.frame, p.psn, l)
		}
		if !started || h.LessThan(p.psn) {
			high[k] = p.psn
		}
		last[k] = p.psn
		seen[c][p.psn] = true
	}
	return nil
}
