package demo

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/gorxe/gorxe/dump"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// trace collects the packets both devices put on the wire, as one-line summaries for the step that
// caused them and, optionally, as a pcap file readable by gorxe dump and Wireshark.
type trace struct {
	mu      sync.Mutex
	lines   []string
	frames  int
	seen    map[psnKey]bool
	dec     *dump.Decoder
	pcap    *pcapgo.Writer
	pcapErr error
	names   map[string]string // address -> "A" or "B"
}

// psnKey identifies a request packet, so a retransmission can be marked as one.
type psnKey struct {
	src    string
	dqpn   uint32
	psn    packet.PSN
	opcode packet.Opcode
}

func newTrace(pcap io.Writer) (*trace, error) {
	t := &trace{dec: dump.NewDecoder(), seen: map[psnKey]bool{}, names: map[string]string{}}
	if pcap != nil {
		t.pcap = pcapgo.NewWriter(pcap)
		if err := t.pcap.WriteFileHeader(65535, gplayers.LinkTypeRaw); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// tap is the netio.TapFunc of both devices: it rebuilds the IP and UDP headers gorxe's sockets put
// on the wire (IP ID 0, DF), so the summary and the capture show exactly what a sniffer would.
func (t *trace) tap(dir netio.Direction, m *netio.Message) {
	if dir == netio.Received {
		return
	}
	env := packet.Envelope{Src: m.Src, Dst: m.Dst, HopLimit: m.TTL, TrafficClass: m.TOS}
	if m.Src.Addr().Unmap().Is4() {
		env.IPFlags = packet.IPv4DontFragment
	}
	frame, err := env.AppendHeaders(make([]byte, 0, env.HeaderLen()+len(m.Buf)), len(m.Buf))
	if err != nil {
		return
	}
	frame = append(frame, m.Buf...)

	t.mu.Lock()
	defer t.mu.Unlock()
	t.frames++
	if t.pcap != nil && t.pcapErr == nil && dir == netio.Sent {
		ci := captureInfo(len(frame))
		t.pcapErr = t.pcap.WritePacket(ci, frame)
	}
	p, err := t.dec.Decode(dump.Frame{Index: t.frames, LinkType: gplayers.LinkTypeRaw, Data: frame, Length: len(frame)})
	if err != nil {
		t.lines = append(t.lines, fmt.Sprintf("undecodable packet: %v", err))
		return
	}
	line := fmt.Sprintf("%s→%s  %s", t.names[m.Src.Addr().String()], t.names[m.Dst.Addr().String()], p.Line())
	if op := p.BTH.Opcode; op.IsRequest() {
		k := psnKey{m.Src.String(), p.BTH.DestQP, p.BTH.PSN, op}
		if t.seen[k] {
			line += "  (retransmission)"
		}
		t.seen[k] = true
	}
	if dir == netio.Lost {
		line += "  ✗ LOST (fault injection)"
	}
	t.lines = append(t.lines, line)
}

// take returns the summaries collected since the last call.
func (t *trace) take() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.lines
	t.lines = nil
	return l
}

func captureInfo(n int) gopacket.CaptureInfo {
	return gopacket.CaptureInfo{Timestamp: time.Now(), CaptureLength: n, Length: n}
}
