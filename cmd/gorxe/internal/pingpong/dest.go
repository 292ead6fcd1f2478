package pingpong

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/gidtext"
)

// MsgLen is the size of one address message: "LLLL:QQQQQQ:PPPPPP:" and 32 GID digits, then a NUL.
const MsgLen = 52

// srqMsgs is how many address messages srq_pingpong exchanges each way, whatever its QP count.
const srqMsgs = 256

// doneMsg ends the exchange: the client sends it with its NUL terminator.
var doneMsg = []byte("done\x00")

// ErrBadMessage: the peer sent something that is not a pingpong address message.
var ErrBadMessage = errors.New("not a pingpong address message")

// Dest is one queue pair's address as the pingpong tools exchange it.
//
//	"%04x:%06x:%06x:%s\0" = LID ":" QPN ":" PSN ":" 32 hex digits of the GID's 16 bytes, NUL
//	 0    5      12     19                                                        51
type Dest struct {
	LID uint16
	QPN uint32 // 24 bits
	PSN uint32 // 24 bits
	GID gorxe.GID
}

// AppendMsg appends the 52-byte message carrying d.
func (d Dest) AppendMsg(b []byte) []byte {
	b = fmt.Appendf(b, "%04x:%06x:%06x:", d.LID, d.QPN&0xffffff, d.PSN&0xffffff)
	b = gidtext.AppendWire(b, d.GID)
	return append(b, 0)
}

// ParseMsg parses a 52-byte address message. It accepts what the C tools write (hex digits of
// either case) and nothing else, so a peer running another tool or protocol is reported rather
// than misread.
func ParseMsg(msg []byte) (Dest, error) {
	var d Dest
	if len(msg) != MsgLen {
		return d, fmt.Errorf("%w: %d bytes, want %d", ErrBadMessage, len(msg), MsgLen)
	}
	if msg[4] != ':' || msg[11] != ':' || msg[18] != ':' || msg[MsgLen-1] != 0 {
		return d, fmt.Errorf("%w: %q", ErrBadMessage, printable(msg))
	}
	lid, ok1 := parseHex(msg[0:4])
	qpn, ok2 := parseHex(msg[5:11])
	psn, ok3 := parseHex(msg[12:18])
	gid, err := gidtext.ParseWire(msg[19 : MsgLen-1])
	if !ok1 || !ok2 || !ok3 || err != nil {
		return d, fmt.Errorf("%w: %q", ErrBadMessage, printable(msg))
	}
	return Dest{LID: uint16(lid), QPN: qpn, PSN: psn, GID: gid}, nil
}

func parseHex(b []byte) (uint32, bool) {
	var v uint32
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint32(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint32(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// printable shows a received message in an error: NULs as \0, at most one message long.
func printable(b []byte) string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) > MsgLen {
		b = b[:MsgLen]
	}
	return string(b)
}
