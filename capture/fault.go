package capture

import "github.com/gorxe/gorxe/netio"

// LostComment is the packet comment of a datagram fault injection dropped: it is in the capture
// so a reader sees the loss in its place, but it never reached the network.
const LostComment = "gorxe: lost (dropped by fault injection; never reached the network)"

// comment is the packet comment that says what fault injection did to a datagram, or "".
func comment(dir netio.Direction) string {
	if dir.Base() == netio.Lost {
		return LostComment
	}
	if dir.Marks() == nil {
		return ""
	}
	return "gorxe: " + dir.String()
}

// faultMarks are the marks fault injection adds to a datagram it sends.
var faultMarks = [...]netio.Direction{netio.Duplicate, netio.Corrupt, netio.Delayed}

// Fault reads back what fault injection did to a captured datagram from its frame's pcapng
// comments: netio.Lost for a datagram it dropped, netio.Sent with the marks it added
// (Duplicate, Corrupt, Delayed) for one it sent, and netio.Sent alone, the zero Direction, when
// no comment says anything of fault injection.
func Fault(comments []string) netio.Direction {
	for _, c := range comments {
		if c == LostComment {
			return netio.Lost
		}
		// Every combination of marks, each compared with the comment the writer gives it.
		for set := 1; set < 1<<len(faultMarks); set++ {
			d := netio.Sent
			for i, m := range faultMarks {
				if set&(1<<i) != 0 {
					d |= m
				}
			}
			if c == comment(d) {
				return d
			}
		}
	}
	return netio.Sent
}
