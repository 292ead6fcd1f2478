package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/gorxe/gorxe/dump"
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
	Mark             Mark   // set by classify
	Summary          string // the `gorxe dump` line
	Explain          string // the `gorxe dump -v` text, when asked for
}

// capture is what read found in a capture file.
type capture struct {
	packets []Packet
	frames  int // frames read
	bad     int // frames that looked like RoCE but could not be decoded
}

// Magic numbers: pcapng's section header block type, and gzip's (captures are often kept
// compressed, and gorxe dump reads them so).
var (
	pcapngMagic = []byte{0x0A, 0x0D, 0x0D, 0x0A}
	gzipMagic   = []byte{0x1F, 0x8B}
)

// frameSource yields the frames of a pcap or pcapng file with their timestamps, which the
// dump package's reader does not keep.
type frameSource struct {
	read     func() ([]byte, gopacket.CaptureInfo, error)
	linkType func(gopacket.CaptureInfo) gplayers.LinkType
}

func openFrames(r io.Reader) (*frameSource, error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(len(gzipMagic)); bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &CaptureError{Err: fmt.Errorf("%w: %v", dump.ErrNotCapture, err)}
		}
		br = bufio.NewReader(zr)
	}
	head, _ := br.Peek(len(pcapngMagic))
	if bytes.Equal(head, pcapngMagic) {
		ng, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return nil, &CaptureError{Err: fmt.Errorf("%w: %v", dump.ErrNotCapture, err)}
		}
		return &frameSource{read: ng.ReadPacketData, linkType: func(ci gopacket.CaptureInfo) gplayers.LinkType {
			ifc, err := ng.Interface(ci.InterfaceIndex)
			if err != nil {
				return gplayers.LinkTypeNull // the decoder reports it as unsupported
			}
			return ifc.LinkType
		}}, nil
	}
	pr, err := pcapgo.NewReader(br)
	if err != nil {
		return nil, &CaptureError{Err: fmt.Errorf("%w: %v", dump.ErrNotCapture, err)}
	}
	lt := pr.LinkType()
	return &frameSource{read: pr.ReadPacketData, linkType: func(gopacket.CaptureInfo) gplayers.LinkType { return lt }}, nil
}

// read decodes every frame of r. With explain set, each packet keeps its verbose dump.
func read(r io.Reader, explain bool) (*capture, error) {
	src, err := openFrames(r)
	if err != nil {
		return nil, err
	}
	c := &capture{}
	dec := dump.NewDecoder()
	for {
		data, ci, err := src.read()
		if errors.Is(err, io.EOF) {
			return c, nil
		}
		if err != nil {
			return nil, &CaptureError{Frame: c.frames, Err: fmt.Errorf("%w: %v", dump.ErrTruncatedCapture, err)}
		}
		c.frames++
		p, err := dec.Decode(dump.Frame{Index: c.frames, LinkType: src.linkType(ci), Data: data, Length: ci.Length})
		if errors.Is(err, dump.ErrNotRoCE) {
			continue
		}
		if err != nil {
			c.bad++
			continue
		}
		tp, err := fromDump(p, ci.Timestamp, explain)
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
