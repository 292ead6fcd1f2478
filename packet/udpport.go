package packet

// RoCEv2 puts flow entropy for ECMP in the UDP source port (IBTA annex A17.4
// recommends the range 0xC000-0xFFFF). The functions here choose it the way
// Linux does (rxe and the RDMA core), so that a gorxe peer picks the same
// port a kernel peer would for the same QP pair.

// udpSourcePortBase is the start of the RoCEv2 source-port range; the low 14
// bits carry the entropy.
const (
	udpSourcePortBase = 0xC000
	udpSourcePortMask = 0x3FFF
	goldenRatio32     = 0x61C88647 // multiplier of the kernel's hash_32
)

// FlowLabelMask keeps the 20 bits of a flow label, the field of the GRH and of the IPv6 header.
const FlowLabelMask = 0xFFFFF

// CalcFlowLabel derives a 20-bit IPv6 flow label from the QP numbers of a
// connection when the address vector specifies none. The product is
// symmetric, so both ends derive the same label (and source port). This is
// the kernel's rdma_calc_flow_label.
func CalcFlowLabel(localQPN, remoteQPN uint32) uint32 {
	v := uint64(localQPN) * uint64(remoteQPN)
	v ^= v >> 20
	v ^= v >> 40
	return uint32(v) & FlowLabelMask
}

// FlowLabelToUDPSourcePort folds a 20-bit flow label into a RoCEv2 UDP source
// port: the low 14 bits XOR the high 6, in the range 0xC000-0xFFFF. This is
// the kernel's rdma_flow_label_to_udp_sport.
func FlowLabelToUDPSourcePort(flowLabel uint32) uint16 {
	fl := flowLabel & FlowLabelMask
	return uint16(fl&udpSourcePortMask^fl>>14) | udpSourcePortBase
}

// UDPSourcePort returns the source port for a connected QP (RC, UC) whose
// address vector has the given flow label; a zero flow label is replaced by
// [CalcFlowLabel] of the two QPNs. This is what rxe sets when a QP is moved to
// RTR with an address vector (rdma_get_udp_sport).
func UDPSourcePort(flowLabel, localQPN, remoteQPN uint32) uint16 {
	if flowLabel&FlowLabelMask == 0 {
		flowLabel = CalcFlowLabel(localQPN, remoteQPN)
	}
	return FlowLabelToUDPSourcePort(flowLabel)
}

// DefaultUDPSourcePort returns the source port rxe gives a QP when it is
// created, before any address vector: 0xC000 plus a 14-bit multiplicative
// hash of its QPN. Datagram QPs (UD, GSI) keep it for every packet.
func DefaultUDPSourcePort(qpn uint32) uint16 {
	return uint16(udpSourcePortBase + (qpn*goldenRatio32)>>(32-14)&udpSourcePortMask)
}

// CMFlowLabel returns the flow label the RDMA connection manager gives a RoCE
// connection whose address carries none (always so over IPv4): a hash of the
// connection's source and destination ports (of the rdma_cm port space, the
// ones in the CMA header of the REQ). It travels in the REQ's FlowLabel
// field and both sides derive their UDP source port from it with
// [UDPSourcePort], instead of from the QPNs.
func CMFlowLabel(srcPort, dstPort uint16) uint32 {
	return (uint32(srcPort)*31 + uint32(dstPort)) & FlowLabelMask
}
