package cq

// Opcode says which operation a completion reports, with the values of libibverbs' enum
// ibv_wc_opcode. Receive-side opcodes have bit 7 set, so Opcode&OpcodeRecv tells the two sides apart.
type Opcode uint8

// Completion opcodes (IBV_WC_*).
const (
	OpcodeSend            Opcode = 0   // IBV_WC_SEND
	OpcodeRDMAWrite       Opcode = 1   // IBV_WC_RDMA_WRITE
	OpcodeRDMARead        Opcode = 2   // IBV_WC_RDMA_READ
	OpcodeCompSwap        Opcode = 3   // IBV_WC_COMP_SWAP
	OpcodeFetchAdd        Opcode = 4   // IBV_WC_FETCH_ADD
	OpcodeBindMW          Opcode = 5   // IBV_WC_BIND_MW
	OpcodeLocalInv        Opcode = 6   // IBV_WC_LOCAL_INV
	OpcodeTSO             Opcode = 7   // IBV_WC_TSO
	OpcodeFlush           Opcode = 8   // IBV_WC_FLUSH
	OpcodeAtomicWrite     Opcode = 9   // IBV_WC_ATOMIC_WRITE
	OpcodeRegMR           Opcode = 10  // the kernel's IB_WC_REG_MR; libibverbs has no user-space REG_MR
	OpcodeRecv            Opcode = 128 // IBV_WC_RECV
	OpcodeRecvRDMAWithImm Opcode = 129 // IBV_WC_RECV_RDMA_WITH_IMM
)

// IsRecv reports whether the completion belongs to the receive side (a receive WQE was consumed).
func (o Opcode) IsRecv() bool { return o&OpcodeRecv != 0 }

// String returns the libibverbs constant name without the IBV_WC_ prefix.
func (o Opcode) String() string {
	switch o {
	case OpcodeSend:
		return "SEND"
	case OpcodeRDMAWrite:
		return "RDMA_WRITE"
	case OpcodeRDMARead:
		return "RDMA_READ"
	case OpcodeCompSwap:
		return "COMP_SWAP"
	case OpcodeFetchAdd:
		return "FETCH_ADD"
	case OpcodeBindMW:
		return "BIND_MW"
	case OpcodeLocalInv:
		return "LOCAL_INV"
	case OpcodeTSO:
		return "TSO"
	case OpcodeFlush:
		return "FLUSH"
	case OpcodeAtomicWrite:
		return "ATOMIC_WRITE"
	case OpcodeRegMR:
		return "REG_MR"
	case OpcodeRecv:
		return "RECV"
	case OpcodeRecvRDMAWithImm:
		return "RECV_RDMA_WITH_IMM"
	}
	return "UNKNOWN"
}
