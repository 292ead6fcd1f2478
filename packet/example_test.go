package packet_test

import (
	"fmt"
	"net/netip"

	"github.com/gorxe/gorxe/packet"
)

// A requester builds an RDMA WRITE packet and stamps its ICRC for the
// framing its unconnected UDP socket will produce (IP ID 0, DF set).
func ExampleAppendPacket() {
	h := packet.Headers{
		BTH:  packet.BTHFields{Opcode: packet.RCRDMAWriteOnly, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 100},
		RETH: packet.RETHFields{VirtualAddress: 0x7f0000001000, RKey: 0x1234, DMALength: 5},
	}
	pkt, err := packet.AppendPacket(nil, &h, []byte("hello"))
	if err != nil {
		panic(err)
	}
	env := packet.Envelope{
		Src:     netip.MustParseAddrPort("10.0.0.1:49441"),
		Dst:     netip.MustParseAddrPort("10.0.0.2:4791"),
		IPFlags: packet.IPv4DontFragment,
	}
	if err := env.PutICRC(pkt); err != nil {
		panic(err)
	}
	fmt.Println(len(pkt), env.VerifyICRC(pkt))
	// Output: 40 <nil>
}

// A receiver on a UDP socket parses a datagram and checks its ICRC without
// knowing the sender's IPv4 Identification.
func ExampleParse() {
	src := netip.MustParseAddrPort("10.0.0.1:49441")
	dst := netip.MustParseAddrPort("10.0.0.2:4791")
	pkt, _ := packet.AppendPacket(nil, &packet.Headers{
		BTH:  packet.BTHFields{Opcode: packet.RCAcknowledge, PKey: 0xFFFF, DestQP: 0x11, PSN: 100},
		AETH: packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited, MSN: 1},
	}, nil)
	sender := packet.Envelope{Src: src, Dst: dst, IPID: 0xfece, IPFlags: packet.IPv4DontFragment}
	_ = sender.PutICRC(pkt) // as kernel rxe would send it

	var p packet.Parsed
	if err := packet.Parse(pkt, &p); err != nil {
		fmt.Println("drop:", err)
		return
	}
	id, flags, err := packet.VerifyICRCIPv4AnyID(src, dst, pkt)
	fmt.Println(p.Opcode(), p.BTH().PSN(), p.AETH().Syndrome(), err, id == 0xfece, flags == packet.IPv4DontFragment)
	// Output: RC_ACKNOWLEDGE 100 ACK <nil> true true
}
