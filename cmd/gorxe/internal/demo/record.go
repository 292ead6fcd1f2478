package demo

import (
	"errors"
	"io"

	"github.com/gorxe/gorxe/capture"
	"github.com/gorxe/gorxe/netio"
)

// recording writes the datagrams of a run to up to two pcapng captures: all of them, with what
// fault injection did in packet comments (-pcap), and only those that reached the network, which
// is what the ladder diagram is drawn from: a sniffer never sees a lost packet, and the trace
// reader finds a loss in the gap it leaves, as it would in any capture.
type recording struct {
	all, wire *capture.Writer // either may be nil
}

// newRecording writes captures to all and wire, either of which may be nil. Every datagram is
// recorded once, when its sender hands it to the network, so the frame numbers are the
// narration's and every frame is flagged outbound: both devices are this process sending.
func newRecording(port uint16, all, wire io.Writer) (*recording, error) {
	r := &recording{}
	var err error
	o := capture.Options{Port: port, Interface: "gorxe demo"}
	if all != nil {
		if r.all, err = capture.NewWriter(all, o); err != nil {
			return nil, err
		}
	}
	if wire != nil {
		if r.wire, err = capture.NewWriter(wire, o); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *recording) record(dir netio.Direction, m *netio.Message) {
	if r.all != nil {
		r.all.Tap(dir, m)
	}
	if r.wire != nil && dir.Base() != netio.Lost {
		r.wire.Tap(dir, m)
	}
}

// close flushes both captures and returns the first error either met. Call it after both
// devices are closed, when no tap can run any more.
func (r *recording) close() error {
	var errs []error
	for _, w := range []*capture.Writer{r.all, r.wire} {
		if w != nil {
			errs = append(errs, w.Close())
		}
	}
	return errors.Join(errs...)
}
