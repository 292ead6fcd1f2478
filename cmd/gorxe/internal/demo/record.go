package demo

import (
	"io"

	"github.com/gorxe/gorxe/capture"
	"github.com/gorxe/gorxe/netio"
)

// recording writes the datagrams of a run as one pcapng capture, byte for byte the same to each
// of its outputs. The demo records every datagram, the ones fault injection dropped too, marked
// in a packet comment, so that its ladder diagram, drawn from one output, is what gorxe trace
// draws of the other, the -pcap file. The wire walkthrough records only what reached the
// network, as a sniffer sees it.
type recording struct {
	w    *capture.Writer // nil without outputs
	lost bool            // lost datagrams are recorded (and numbered); otherwise they are left out
}

// newRecording writes the capture to each of outs that is not nil; lost says whether the
// datagrams fault injection dropped are recorded. Every datagram is recorded once, when its
// sender hands it to the network, so the frame numbers are the narration's and every frame is
// flagged outbound: both devices are this process sending.
func newRecording(port uint16, lost bool, outs ...io.Writer) (*recording, error) {
	r := &recording{lost: lost}
	var ws []io.Writer
	for _, w := range outs {
		if w != nil {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return r, nil
	}
	var err error
	r.w, err = capture.NewWriter(io.MultiWriter(ws...), capture.Options{Port: port, Interface: "gorxe demo"})
	return r, err
}

// records says whether a datagram tapped in direction dir has a frame of its own.
func (r *recording) records(dir netio.Direction) bool { return r.lost || dir.Base() != netio.Lost }

func (r *recording) record(dir netio.Direction, m *netio.Message) {
	if r.w != nil && r.records(dir) {
		r.w.Tap(dir, m)
	}
}

// packets returns how many datagrams were recorded.
func (r *recording) packets() int {
	if r.w == nil {
		return 0
	}
	return r.w.Packets()
}

// close flushes the capture. Call it after both devices are closed, when no tap can run any
// more.
func (r *recording) close() error {
	if r.w == nil {
		return nil
	}
	return r.w.Close()
}
