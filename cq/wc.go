package cq

// WCFlags are the IBV_WC_* bits of WC.WCFlags that say which optional fields are valid.
type WCFlags uint8

// Completion flags (libibverbs values).
const (
	WCFlagGRH      WCFlags = 1 << 0 // IBV_WC_GRH: a 40-byte GRH precedes UD data in the receive buffer
	WCFlagWithImm  WCFlags = 1 << 1 // IBV_WC_WITH_IMM: ImmData is valid
	WCFlagIPCsumOK WCFlags = 1 << 2 // IBV_WC_IP_CSUM_OK (never set: no checksum offload to report)
	WCFlagWithInv  WCFlags = 1 << 3 // IBV_WC_WITH_INV: InvalidatedRKey is valid
)

// WC is one work completion, field for field libibverbs' struct ibv_wc. Only WRID, Status, Opcode
// (for successful completions) and QPNum are meaningful for every completion; the others depend on
// the opcode, as in libibverbs.
type WC struct {
	WRID      uint64 // the wr_id given when the work request was posted
	Status    Status
	Opcode    Opcode
	VendorErr uint32 // gorxe-specific detail for error statuses; 0 otherwise
	ByteLen   uint32 // bytes transferred: data received, or the message length on the send side
	// ImmData is the immediate value exactly as carried in the ImmDt header, read big-endian, so it
	// equals the sender's SendWR.ImmData (C programs need ntohl; Go users do not). Valid with
	// WCFlagWithImm.
	ImmData uint32
	// InvalidatedRKey is the R_Key a SEND_WITH_INV invalidated (valid with WCFlagWithInv). libibverbs
	// shares one union for this and ImmData; gorxe keeps them apart.
	InvalidatedRKey uint32
	QPNum           uint32 // the local QP the work request belonged to
	SrcQP           uint32 // UD: the sender's QPN (from the DETH)
	WCFlags         WCFlags
	PKeyIndex       uint16 // GSI: index of the P_Key the packet carried
	SLID            uint16 // always 0 on RoCE
	// SL: RoCE carries none. A UD receive reports here, as ConnectX NICs do, the network header
	// the datagram came with: 0x8 (RoCEv2) with 0x2 for IPv4 or 0x1 for IPv6.
	SL           uint8
	DLIDPathBits uint8 // always 0 on RoCE
}
