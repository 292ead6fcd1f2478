package tour

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/dump"
)

// tourCapture holds nine frames of real kernel rxe traffic, frames 1, 4, 5,
// 247, 427, 1511, 1512, 1911 and 1961 of the capture the packet package tests
// against: an RC SEND's first and last packets and its ACK, a UD SEND, an RDMA
// WRITE, an RDMA READ request and response, a FETCH_ADD and its atomic ACK.
// Embedding it lets the tour run from any directory.
//
//go:embed tourdata/rxe-tour.pcap
var tourCapture []byte

// tourStop is one packet of the tour: the frame of the full capture it is,
// what the full capture holds between it and the stop before, and what it
// does and why.
type tourStop struct {
	frame   int
	skipped []tourSkip // opcodes of the frames between the previous stop and this one
	why     string     // why those packets are there; "" when none were skipped
	story   string
}

// tourSkip counts the skipped packets of one opcode.
type tourSkip struct {
	n      int
	opcode string
}

// tourStops narrate the frames of tourCapture, in order. TestTourSkips checks
// the counts of skipped packets against the full capture.
var tourStops = []tourStop{
	{frame: 1, story: `
The first packet of a SEND: 10.99.0.3 sends a 4 KiB message to queue pair
(QP) 0x11 on 10.99.0.2. A queue pair is RDMA's connection, like the two ends
of a TCP socket, except that the NIC (here the kernel's rxe driver) moves
whole messages between registered memory buffers, and the receiving program
must have posted a buffer for the message in advance. The path MTU is 1024
bytes, so the message travels as four packets: FIRST, MIDDLE, MIDDLE, LAST.
Unlike TCP's, the sequence number (PSN) counts packets, not bytes, and is 24
bits wide. It all rides in UDP to port 4791; the source port is chosen per QP
so that switches spread different QPs over different paths.`},
	{frame: 4, skipped: []tourSkip{{2, "RC_SEND_MIDDLE"}},
		why: `the second and third KiB of the message, PSNs 6186378 and 6186379; a MIDDLE
packet is just a BTH and 1024 bytes of data.`,
		story: `
The LAST packet completes the message. Its AckReq bit is set: the sender asks
for an acknowledgement now. As in TCP, acknowledgements are cumulative, but
here the sender decides when it wants one, and rxe asks on the last packet of
each message. The receiving program learns of the message only once all of it
has arrived, from a completion that finds the data already in its buffer.`},
	{frame: 5, story: `
The receiver's answer, an ACK: a BTH and the 4-byte AETH. Its PSN is that of
the last request packet it covers (6186380, the LAST), so this one ACK
acknowledges all four packets. The AETH's MSN counts the messages the receiver
has completed: one. Had a packet been lost, the receiver would have sent a NAK
with "PSN sequence error" instead, and the sender would resend everything from
that PSN on (go-back-N: there is no selective acknowledgement).`},
	{frame: 247,
		skipped: []tourSkip{{40, "RC_SEND_FIRST"}, {80, "RC_SEND_MIDDLE"}, {39, "RC_SEND_LAST"}, {42, "RC_ACKNOWLEDGE"}, {40, "UC_SEND_ONLY"}},
		why: `the rest of this SEND test in both directions, then a test on QP 0x12 of
Unreliable Connection (UC): the same connection model as RC, but without
acknowledgements or retransmission.`,
		story: `
A datagram. Unreliable Datagram (UD) is RDMA's UDP: one UD QP talks to any
other, so every packet says who sent it, in the 8-byte DETH after the BTH: the
Q_Key, a number the receiving QP checks (0x11111111 here), and the sender's
QP. A UD message must fit in one packet (SEND_ONLY), nobody acknowledges it
and nobody checks its PSN; a datagram lost is gone.`},
	{frame: 427,
		skipped: []tourSkip{{70, "RC_SEND_ONLY"}, {70, "RC_ACKNOWLEDGE"}, {39, "UD_SEND_ONLY"}},
		why: `the rest of the UD test, then a latency test: one-packet SENDs, each
acknowledged at once, on sixteen QPs (0x14 to 0x23).`,
		story: `
RDMA WRITE: the sender puts data straight into the receiver's memory; the
receiving program takes no part and posts no buffer for it. The first packet
carries the 16-byte RETH after the BTH: the virtual address to write at, the
R_Key the receiver handed out when it registered that memory (it checks the
key against the address range and the access rights it granted), and the
length of the whole write, 65536 bytes. The MIDDLE and LAST packets that
follow carry only data, which lands after the previous packet's.`},
	{frame: 1511,
		skipped: []tourSkip{{49, "RC_RDMA_WRITE_FIRST"}, {934, "RC_RDMA_WRITE_MIDDLE"}, {50, "RC_RDMA_WRITE_LAST"}, {50, "RC_ACKNOWLEDGE"}},
		why: `the rest of the WRITE test on QP 0x24, one ACK per write (the capture keeps
only part of each write's MIDDLE packets).`,
		story: `
RDMA READ, the other direction: the requester asks for 65536 bytes of the
responder's memory, named by a RETH (address, R_Key, length) as in a WRITE,
and sends no data. The request uses one PSN but reserves one for every
response packet to come back, 64 at a 1024-byte MTU, so the next request on
this QP starts 64 PSNs later.`},
	{frame: 1512, story: `
The responder answers with the data. Read responses reuse the request's PSNs,
10542055 to 10542118, which is how the requester matches them to its request
without any other identifier. The FIRST and LAST responses carry an AETH,
which also acknowledges the request; MIDDLE responses carry data only.`},
	{frame: 1911,
		skipped: []tourSkip{{49, "RC_RDMA_READ_REQUEST"}, {49, "RC_RDMA_READ_RESPONSE_FIRST"}, {50, "RC_RDMA_READ_RESPONSE_LAST"},
			{50, "RC_SEND_FIRST"}, {100, "RC_SEND_MIDDLE"}, {50, "RC_SEND_LAST"}, {50, "RC_ACKNOWLEDGE"}},
		why: `the rest of the READ test (the capture holds no MIDDLE responses), then a
SEND test on QP 0x26.`,
		story: `
An atomic operation. FETCH_ADD adds a number to an 8-byte word in the
responder's memory and returns the value the word held before, in one step no
other access can come between. The 28-byte AtomicETH carries the address, the
R_Key, the number to add (1) and a compare value that only COMPARE_SWAP uses.
This test sends a stream of them, each to the next 64-byte slot.`},
	{frame: 1961, skipped: []tourSkip{{49, "RC_FETCH_ADD"}},
		why: `the requester sends its FETCH_ADDs back to back, PSNs 8659750 to 8659798,
without waiting for the answers.`,
		story: `
The answer to the first FETCH_ADD (the same PSN, 8659749): an AETH that
acknowledges it, then the 8-byte AtomicAckETH with the value the word held
before the add. The responder keeps its recent atomic answers, so a request
that is retransmitted gets the same answer again instead of adding twice.`},
}

// Command is gorxe tour: it explains, packet by packet and field by field, packets two Linux
// kernels exchanged, the protocol gorxe speaks.
var Command = tool.Command{
	Name:     "tour",
	Synopsis: "gorxe tour",
	Summary:  "walk through packets of real kernel rxe traffic, field by field",
	Usage: func(w io.Writer) {
		fmt.Fprintln(w, "Usage: gorxe tour\n\nTells nine packets of real kernel rxe traffic in words, then decodes each field by field.")
	},
	Parse: func(args []string) (tool.Run, error) {
		switch {
		case len(args) == 1 && (args[0] == "-h" || args[0] == "--help"):
			return nil, tool.ErrHelp
		case len(args) != 0:
			return nil, &getopt.UsageError{Msg: fmt.Sprintf("unexpected argument %q: the tour takes none", args[0])}
		}
		return func(_ context.Context, stdout, _ io.Writer) error { return Write(stdout) }, nil
	},
}

// Write writes the tour.
func Write(w io.Writer) error {
	r, err := dump.NewReader(bytes.NewReader(tourCapture))
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `A tour of RoCEv2: %d packets two Linux kernels (Soft-RoCE, rxe) exchanged while
running perftest's tools, picked from a capture of %d packets. Each is told in
words, then decoded field by field as "gorxe dump -v" shows any capture; "#N"
is the packet's frame number in the full capture.
`, len(tourStops), 2540)
	d := dump.NewDecoder()
	prev := 0
	for i, s := range tourStops {
		f, err := r.Next()
		if err != nil {
			return fmt.Errorf("frame of stop %d: %w", i+1, err)
		}
		f.Index = s.frame
		p, err := d.Decode(f)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n── %d of %d: %s ──\n", i+1, len(tourStops), p.BTH.Opcode)
		if n := s.frame - prev - 1; n > 0 {
			b.WriteString("\n" + wrap(fmt.Sprintf("Skipped %s (%s): %s", framesBetween(prev, s.frame), skippedList(s.skipped), s.why), 78) + "\n")
		}
		b.WriteString(s.story + "\n\n")
		if err := p.WriteVerbose(&b); err != nil {
			return err
		}
		prev = s.frame
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("the tour capture holds more frames than the tour tells")
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// framesBetween names the frames after a and before b.
func framesBetween(a, b int) string {
	switch n := b - a - 1; n {
	case 1:
		return fmt.Sprintf("frame %d", a+1)
	case 2:
		return fmt.Sprintf("frames %d and %d", a+1, b-1)
	default:
		return fmt.Sprintf("%d frames, %d to %d", n, a+1, b-1)
	}
}

// skippedList writes the counts of skipped packets by opcode.
func skippedList(skips []tourSkip) string {
	parts := make([]string, len(skips))
	for i, s := range skips {
		parts[i] = fmt.Sprintf("%d %s", s.n, s.opcode)
	}
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// wrap refills text into lines of at most width columns, breaking at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	col := 0
	for _, word := range strings.Fields(text) {
		n := len([]rune(word))
		switch {
		case col == 0:
		case col+1+n > width:
			b.WriteByte('\n')
			col = 0
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += n
	}
	return b.String()
}
