package trace

import (
	"errors"
	"io"
	"strings"
	"time"

	"github.com/gorxe/gorxe/dump"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// Packet is one RoCEv2 packet of a capture, reduced to what the diagram draws.
type Packet struct {
	Frame            int       // 1-based index of the frame in the capture
	Time             time.Time // capture timestamp
	Src, Dst         Endpoint  // Src.QPN is inferred; see resolveEndpoints
	SrcPort, DstPort uint16    // UDP ports
	Opcode           packet.Opcode
	PSN              packet.PSN
	Len              int    // payload bytes, without pad and ICRC
	DMALen           uint32 // RETH DMA length of an RDMA READ request, else 0
	HasAETH          bool
	Syndrome         packet.Syndrome // valid when HasAETH
	ICRC             uint32          // the packet's ICRC field: tells an exact repeat from a resend
	ICRCOK           bool
	// Lost tells that fault injection dropped the packet (a gorxe capture marks it so): its
	// sender sent it, but it never reached the network.
	Lost    bool
	Mark    Mark   // set by classify
	Summary string // the `gorxe dump` line
	Explain string // the `gorxe dump -v` text, when asked for
}

// capture is what read found in a capture file.
type capture struct {
	packets []Packet
	frames  int // frames read
	bad     int // frames that looked like RoCE but could not be decoded
}

// read decodes every frame of r. With explain set, each packet keeps its verbose dump.
func read(r io.Reader, explain bool) (*capture, error) {
	src, err := dump.NewReader(r)
	if err != nil {
		return nil, &CaptureError{Err: err}
	}
	c := &capture{}
	dec := dump.NewDecoder()
	noted := 0 // ports of src.Ports() given to dec
	for {
		f, err := src.Next()
		if errors.Is(err, io.EOF) {
			return c, nil
		}
		if err != nil {
			return nil, &CaptureError{Frame: c.frames, Err: err}
		}
		c.frames++
		// A capture gorxe wrote names the UDP port RoCE runs on, and keeps the datagrams fault
		// injection dropped, marked (the decoder reads the mark into dump.Packet.Fault): the
		// diagram draws each where it was sent, as a loss.
		for _, p := range src.Ports()[noted:] {
			dec.AddPort(p)
		}
		noted = len(src.Ports())
		p, err := dec.Decode(f)
		if errors.Is(err, dump.ErrNotRoCE) {
			continue
		}
		if err != nil {
			c.bad++
			continue
		}
		tp, err := fromDump(p, f.Time, explain)
		if err != nil {
			return nil, err
		}
		c.packets = append(c.packets, tp)
	}
}

// fromDump copies what the diagram needs out of a decoded packet, whose layers the decoder
// reuses for the next frame.
func fromDump(p *dump.Packet, ts time.Time, explain bool) (Packet, error) {
	b := &p.BTH.BTHFields
	tp := Packet{
		Frame:   p.Frame,
		Time:    ts,
		Src:     Endpoint{Addr: p.Src.Addr().Unmap()},
		Dst:     Endpoint{Addr: p.Dst.Addr().Unmap(), QPN: b.DestQP, Known: true},
		SrcPort: p.Src.Port(),
		DstPort: p.Dst.Port(),
		Opcode:  b.Opcode,
		PSN:     b.PSN,
		Len:     len(p.Payload),
		ICRC:    p.BTH.ICRC,
		ICRCOK:  p.ICRCErr == nil,
		Lost:    p.Fault.Base() == netio.Lost,
		Summary: p.Line(),
	}
	if h := p.Header(packet.HeaderDETH); h != nil {
		tp.Src.QPN, tp.Src.Known = packet.DETH(h).SrcQP(), true
	}
	if h := p.Header(packet.HeaderAETH); h != nil {
		tp.HasAETH, tp.Syndrome = true, packet.AETH(h).Syndrome()
	}
	if h := p.Header(packet.HeaderRETH); h != nil && b.Opcode.Kind() == packet.KindRDMAReadRequest {
		tp.DMALen = packet.RETH(h).DMALength()
	}
	if explain {
		var sb strings.Builder
		if err := p.WriteVerbose(&sb); err != nil {
			return Packet{}, err
		}
		tp.Explain = sb.String()
	}
	return tp, nil
}
