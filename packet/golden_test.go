package packet

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func b01(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

// wiresharkColumns renders a parsed packet the way the CSV's Wireshark
// columns print it, so that every column can be compared as text.
func wiresharkColumns(frameNo int, env *Envelope, p *Parsed) map[string]string {
	m := map[string]string{
		"frame.number": fmt.Sprint(frameNo),
		"ip.src":       "", "ip.dst": "", "ipv6.src": "", "ipv6.dst": "",
		"udp.srcport": fmt.Sprint(env.Src.Port()),
		"udp.length":  fmt.Sprint(UDPHeaderSize + len(p.Bytes())),
	}
	if env.Src.Addr().Is4() {
		m["ip.src"], m["ip.dst"] = env.Src.Addr().String(), env.Dst.Addr().String()
	} else {
		m["ipv6.src"], m["ipv6.dst"] = env.Src.Addr().String(), env.Dst.Addr().String()
	}
	bth := p.BTH()
	m["infiniband.bth.opcode"] = fmt.Sprint(uint8(bth.Opcode()))
	m["infiniband.bth.se"] = b01(bth.SolicitedEvent())
	m["infiniband.bth.m"] = b01(bth.MigReq())
	m["infiniband.bth.padcnt"] = fmt.Sprint(bth.PadCount())
	m["infiniband.bth.p_key"] = fmt.Sprint(bth.PKey())
	m["infiniband.bth.destqp"] = fmt.Sprintf("0x%06x", bth.DestQP())
	m["infiniband.bth.a"] = b01(bth.AckReq())
	m["infiniband.bth.psn"] = fmt.Sprint(uint32(bth.PSN()))
	for _, k := range []string{"reth.va", "reth.r_key", "reth.dmalen", "aeth.syndrome", "aeth.msn",
		"deth.q_key", "deth.srcqp", "immdt", "ieth", "atomiceth.swapdt", "atomiceth.cmpdt",
		"atomicacketh.origremdt"} {
		m["infiniband."+k] = ""
	}
	if r := p.RETH(); r != nil {
		m["infiniband.reth.va"] = fmt.Sprintf("0x%016x", r.VirtualAddress())
		m["infiniband.reth.r_key"] = fmt.Sprintf("0x%08x", r.RKey())
		m["infiniband.reth.dmalen"] = fmt.Sprint(r.DMALength())
	}
	if a := p.AtomicETH(); a != nil { // Wireshark files the VA and R_Key under reth
		m["infiniband.reth.va"] = fmt.Sprintf("0x%016x", a.VirtualAddress())
		m["infiniband.reth.r_key"] = fmt.Sprintf("0x%08x", a.RKey())
		m["infiniband.atomiceth.swapdt"] = fmt.Sprint(a.SwapAddData())
		m["infiniband.atomiceth.cmpdt"] = fmt.Sprint(a.CompareData())
	}
	if a := p.AETH(); a != nil {
		m["infiniband.aeth.syndrome"] = fmt.Sprint(uint8(a.Syndrome()))
		m["infiniband.aeth.msn"] = fmt.Sprint(a.MSN())
	}
	if d := p.DETH(); d != nil {
		m["infiniband.deth.q_key"] = fmt.Sprintf("0x%016x", d.QKey())
		m["infiniband.deth.srcqp"] = fmt.Sprintf("0x%08x", d.SrcQP())
	}
	if i := p.ImmDt(); i != nil {
		m["infiniband.immdt"] = fmt.Sprintf("0x%08x", i.ImmediateData())
	}
	if i := p.IETH(); i != nil {
		m["infiniband.ieth"] = fmt.Sprintf("0x%08x", i.RKey())
	}
	if a := p.AtomicAckETH(); a != nil {
		m["infiniband.atomicacketh.origremdt"] = fmt.Sprint(a.OriginalRemoteData())
	}
	// Wireshark reads the trailer as a big-endian number; the ICRC value
	// itself is little-endian on the wire.
	icrc := p.Bytes()[len(p.Bytes())-ICRCSize:]
	m["infiniband.invariant.crc"] = fmt.Sprintf("0x%08x", binary.BigEndian.Uint32(icrc))
	return m
}

func TestGoldenDecodeMatchesWireshark(t *testing.T) {
	seen := map[Opcode]int{}
	for _, g := range golden(t) {
		var p Parsed
		require.NoError(t, Parse(g.pkt, &p), "frame %d: Parse", g.frame)
		seen[p.Opcode()]++
		got := wiresharkColumns(g.frame, &g.env, &p)
		require.Len(t, got, len(g.want), "frame %d: rendered %d columns, CSV has %d", g.frame, len(got), len(g.want))
		for col, want := range g.want {
			assert.Equal(t, want, got[col], "frame %d (%v): %s = %q, Wireshark says %q", g.frame, p.Opcode(), col, got[col], want)
		}
		assert.Equal(t, uint16(UDPPort), g.env.Dst.Port(), "frame %d: destination port %d", g.frame, g.env.Dst.Port())
	}
	// The capture must exercise the header combinations it is known to hold.
	for _, op := range []Opcode{RCSendFirst, RCSendMiddle, RCSendLast, RCSendOnly, RCRDMAWriteFirst,
		RCRDMAWriteMiddle, RCRDMAWriteLast, RCRDMAWriteOnly, RCRDMAReadRequest, RCRDMAReadResponseFirst,
		RCRDMAReadResponseLast, RCRDMAReadResponseOnly, RCAcknowledge, RCAtomicAcknowledge, RCFetchAdd,
		UCSendOnly, UDSendOnly} {
		assert.NotEqual(t, 0, seen[op], "capture has no %v packet", op)
	}
}
