package dump

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/gorxe/gorxe/capture"
)

// Frame is one captured frame.
type Frame struct {
	Index    int               // 1-based position in the capture, counting every frame
	LinkType gplayers.LinkType // how Data starts
	Data     []byte            // the captured bytes
	Length   int               // the frame's length on the wire; more than len(Data) if cut
	Time     time.Time         // when it was captured
	Comments []string          // the frame's pcapng comments (gorxe's captures mark fault injection there)
}

// Reader reads the frames of a pcap or pcapng capture.
type Reader struct {
	read     func() ([]byte, gopacket.CaptureInfo, error)
	linkType func(gopacket.CaptureInfo) gplayers.LinkType
	n        int

	ng       *pcapgo.NgReader
	noted    map[int]bool // pcapng interfaces whose comments were read
	ports    []uint16     // RoCEv2 ports the capture announces (PortNote)
	comments []string     // the comments of the frame read last (pcapng)
}

// File magics, as the first four bytes appear in the file.
var (
	magicPcapng = []byte{0x0A, 0x0D, 0x0D, 0x0A}
	magicsPcap  = [][]byte{
		{0xD4, 0xC3, 0xB2, 0xA1}, {0xA1, 0xB2, 0xC3, 0xD4}, // microseconds, little and big endian
		{0x4D, 0x3C, 0xB2, 0xA1}, {0xA1, 0xB2, 0x3C, 0x4D}, // nanoseconds
	}
	magicGzip = []byte{0x1F, 0x8B}
)

// NewReader detects the format of r by its magic number (gzip-compressed
// captures too) and reads its header. It returns ErrNotCapture, or
// ErrTruncatedCapture if the header is cut short.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(2); bytes.Equal(head, magicGzip) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%w: bad gzip stream: %v", ErrNotCapture, err)
		}
		br = bufio.NewReader(zr)
	}
	head, _ := br.Peek(4)
	switch {
	case bytes.Equal(head, magicPcapng):
		ng, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return nil, headerError(err)
		}
		r := &Reader{
			ng:    ng,
			noted: map[int]bool{},
			ports: capture.CommentPorts(ng.SectionInfo().Comment),
			linkType: func(ci gopacket.CaptureInfo) gplayers.LinkType {
				ifc, err := ng.Interface(ci.InterfaceIndex)
				if err != nil {
					return gplayers.LinkTypeNull // reported as unsupported
				}
				return ifc.LinkType
			},
		}
		r.read = func() ([]byte, gopacket.CaptureInfo, error) {
			data, ci, opts, err := ng.ReadPacketDataWithOptions()
			r.comments = opts.Comments
			return data, ci, err
		}
		return r, nil
	case isPcap(head):
		pr, err := pcapgo.NewReader(br)
		if err != nil {
			return nil, headerError(err)
		}
		lt := pr.LinkType()
		return &Reader{
			read:     pr.ReadPacketData,
			linkType: func(gopacket.CaptureInfo) gplayers.LinkType { return lt },
		}, nil
	}
	return nil, ErrNotCapture
}

func isPcap(head []byte) bool {
	for _, m := range magicsPcap {
		if bytes.Equal(head, m) {
			return true
		}
	}
	return false
}

// headerError classifies a failure to read a capture's file header whose
// magic number was right.
func headerError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: file header cut short", ErrTruncatedCapture)
	}
	return fmt.Errorf("%w: %v", ErrNotCapture, err)
}

// Next returns the next frame. At the end of the capture it returns io.EOF;
// if the capture ends inside a record or cannot be read, an error wrapping
// ErrTruncatedCapture.
func (r *Reader) Next() (Frame, error) {
	data, ci, err := r.read()
	switch {
	case errors.Is(err, io.EOF):
		return Frame{}, io.EOF
	case err != nil:
		return Frame{}, fmt.Errorf("%w after frame %d: %v", ErrTruncatedCapture, r.n, err)
	}
	r.n++
	if r.ng != nil && !r.noted[ci.InterfaceIndex] {
		r.noted[ci.InterfaceIndex] = true
		if ifc, err := r.ng.Interface(ci.InterfaceIndex); err == nil {
			r.ports = append(r.ports, capture.CommentPorts(ifc.Comment)...)
		}
	}
	return Frame{Index: r.n, LinkType: r.linkType(ci), Data: data, Length: ci.Length, Time: ci.Timestamp, Comments: r.comments}, nil
}

// Ports returns the UDP ports the capture has announced, so far, to carry
// RoCEv2 (see capture.PortNote). A pcapng interface's note is known once a frame of
// the interface has been read; a classic pcap file announces none.
func (r *Reader) Ports() []uint16 { return r.ports }
