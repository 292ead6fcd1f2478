package capture

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// Options configure a [Writer].
type Options struct {
	// Port is the UDP port RoCE runs on, recorded in the file; zero means 4791.
	Port uint16
	// Interface names the capture's interface in the file (e.g. the device name).
	Interface string
	// Now stamps packets; nil means time.Now. Tests pass a fixed clock for reproducible files.
	Now func() time.Time
}

// Writer writes tapped datagrams to a pcapng stream. It is safe for concurrent use: a device's
// goroutines all tap into one Writer, and the file shows datagrams in the order the taps ran.
type Writer struct {
	mu    sync.Mutex
	ng    *pcapgo.NgWriter
	now   func() time.Time
	frame []byte // scratch, reused for every packet
	err   error  // the first write error; later packets are not written
	n     int
}

// ErrClosed is returned by a Writer used after Close.
var ErrClosed = errors.New("capture: writer closed")

// NewWriter writes a pcapng section and interface header to w and returns a Writer for packets.
func NewWriter(w io.Writer, o Options) (*Writer, error) {
	if o.Port == 0 {
		o.Port = packet.UDPPort
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Interface == "" {
		o.Interface = "gorxe"
	}
	intf := pcapgo.DefaultNgInterface
	intf.Name = o.Interface
	intf.LinkType = gplayers.LinkTypeEthernet
	intf.Comment = PortComment(o.Port)
	intf.Description = "RoCEv2 datagrams sent and received by a gorxe device"
	opts := pcapgo.DefaultNgWriterOptions
	opts.SectionInfo.Application = "gorxe"
	ng, err := pcapgo.NewNgWriterInterface(w, intf, opts)
	if err != nil {
		return nil, err
	}
	return &Writer{ng: ng, now: o.Now, frame: make([]byte, 0, ethHeaderSize+maxFrameTail)}, nil
}

// Tap writes one datagram; it has the signature of a netio.TapFunc. A datagram that cannot be
// framed (an address family mismatch) is skipped; a write error stops the capture and is kept
// for [Writer.Err].
func (w *Writer) Tap(dir netio.Direction, m *netio.Message) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	frame, err := appendFrame(w.frame[:0], m, dir.Base() == netio.Received)
	if err != nil {
		return
	}
	w.frame = frame[:0]
	ci := gopacket.CaptureInfo{Timestamp: w.now(), CaptureLength: len(frame), Length: len(frame)}
	var po pcapgo.NgPacketOptions
	flags := pcapgo.NgEpbFlags{Direction: pcapgo.NgEpbFlagDirectionOutbound}
	if dir.Base() == netio.Received {
		flags.Direction = pcapgo.NgEpbFlagDirectionInbound
	}
	po.Flags = &flags
	if c := comment(dir); c != "" {
		po.Comments = []string{c}
	}
	w.err = w.ng.WritePacketWithOptions(ci, frame, po)
	w.n++
}

// Packets returns how many datagrams were written.
func (w *Writer) Packets() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Flush writes buffered packets to the underlying writer.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.err = w.ng.Flush()
	return w.err
}

// Close flushes the writer and stops it; packets tapped afterwards are dropped. It does not close
// the underlying writer.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		if w.err == ErrClosed {
			return nil
		}
		return w.err
	}
	err := w.ng.Flush()
	w.err = ErrClosed
	return err
}

// Err returns the error that stopped the capture, if any, other than Close.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == ErrClosed {
		return nil
	}
	return w.err
}
