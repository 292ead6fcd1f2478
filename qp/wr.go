package qp

import (
	"fmt"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
)

// WROpcode is the operation of a send work request, with the values of enum ibv_wr_opcode.
type WROpcode uint8

// Send work request opcodes (IBV_WR_*).
const (
	WRRDMAWrite         WROpcode = 0
	WRRDMAWriteWithImm  WROpcode = 1
	WRSend              WROpcode = 2
	WRSendWithImm       WROpcode = 3
	WRRDMARead          WROpcode = 4
	WRAtomicCmpAndSwp   WROpcode = 5
	WRAtomicFetchAndAdd WROpcode = 6
	WRLocalInv          WROpcode = 7
	WRBindMW            WROpcode = 8
	WRSendWithInv       WROpcode = 9
	WRTSO               WROpcode = 10 // never allowed: rxe has no LSO
	WRDriver1           WROpcode = 11 // never allowed: no provider-specific opcodes
	WRFlush             WROpcode = 14
	WRAtomicWrite       WROpcode = 15
	// WRRegMR is the kernel's IB_WR_REG_MR (0x20): fast registration of a region allocated with
	// AllocMR. libibverbs has no user-space equivalent.
	WRRegMR WROpcode = 0x20
)

// opInfo describes what an opcode needs and which QP types accept it (rxe_wr_opcode_info).
type opInfo struct {
	known  bool
	types  uint8 // bit 1<<Type per accepting QP type
	inline bool  // may carry inline data
	atomic bool  // 8-byte local buffer and 8-byte aligned remote address
	wc     cq.Opcode
	name   string
}

const (
	allTypes  = 1<<TypeGSI | 1<<TypeRC | 1<<TypeUC | 1<<TypeUD
	connTypes = 1<<TypeRC | 1<<TypeUC
	rcOnly    = 1 << TypeRC
)

var opInfos = [WRRegMR + 1]opInfo{
	WRRDMAWrite:         {true, connTypes, true, false, cq.OpcodeRDMAWrite, "RDMA_WRITE"},
	WRRDMAWriteWithImm:  {true, connTypes, true, false, cq.OpcodeRDMAWrite, "RDMA_WRITE_WITH_IMM"},
	WRSend:              {true, allTypes, true, false, cq.OpcodeSend, "SEND"},
	WRSendWithImm:       {true, allTypes, true, false, cq.OpcodeSend, "SEND_WITH_IMM"},
	WRRDMARead:          {true, rcOnly, false, false, cq.OpcodeRDMARead, "RDMA_READ"},
	WRAtomicCmpAndSwp:   {true, rcOnly, false, true, cq.OpcodeCompSwap, "ATOMIC_CMP_AND_SWP"},
	WRAtomicFetchAndAdd: {true, rcOnly, false, true, cq.OpcodeFetchAdd, "ATOMIC_FETCH_AND_ADD"},
	WRLocalInv:          {true, rcOnly, false, false, cq.OpcodeLocalInv, "LOCAL_INV"},
	WRBindMW:            {true, connTypes, false, false, cq.OpcodeBindMW, "BIND_MW"},
	WRSendWithInv:       {true, 1<<TypeRC | 1<<TypeUC | 1<<TypeUD, true, false, cq.OpcodeSend, "SEND_WITH_INV"},
	WRTSO:               {true, 0, false, false, cq.OpcodeTSO, "TSO"},
	WRDriver1:           {true, 0, false, false, cq.OpcodeSend, "DRIVER1"},
	WRFlush:             {true, rcOnly, false, false, cq.OpcodeFlush, "FLUSH"},
	WRAtomicWrite:       {true, rcOnly, false, false, cq.OpcodeAtomicWrite, "ATOMIC_WRITE"},
	WRRegMR:             {true, rcOnly, false, false, cq.OpcodeRegMR, "REG_MR"},
}

func (o WROpcode) info() *opInfo {
	if int(o) < len(opInfos) && opInfos[o].known {
		return &opInfos[o]
	}
	return nil
}

// String returns the libibverbs name without the IBV_WR_ prefix.
func (o WROpcode) String() string {
	if in := o.info(); in != nil {
		return in.name
	}
	return fmt.Sprintf("WR(%d)", uint8(o))
}

// AllowedOn reports whether a QP of type t accepts the opcode.
func (o WROpcode) AllowedOn(t Type) bool {
	in := o.info()
	return in != nil && t.valid() && in.types&(1<<t) != 0
}

// CompletionOpcode returns the WC opcode a completion of this work request carries.
func (o WROpcode) CompletionOpcode() cq.Opcode {
	if in := o.info(); in != nil {
		return in.wc
	}
	return cq.OpcodeSend
}

// IsAtomic reports whether the opcode is a compare-and-swap or fetch-and-add, which need an
// 8-byte local buffer and an 8-byte aligned remote address.
func (o WROpcode) IsAtomic() bool {
	in := o.info()
	return in != nil && in.atomic
}

// SendFlags are the IBV_SEND_* bits of SendWR.Flags.
type SendFlags uint8

// Send flags (libibverbs values).
const (
	SendFence     SendFlags = 1 << 0 // wait for earlier RDMA READs and atomics before starting
	SendSignaled  SendFlags = 1 << 1 // generate a WC on success
	SendSolicited SendFlags = 1 << 2 // set the solicited event bit on the last packet
	SendInline    SendFlags = 1 << 3 // payload is SendWR.InlineData, copied at post time
)

// RDMAInfo is the remote buffer of an RDMA READ/WRITE, FLUSH or ATOMIC_WRITE.
type RDMAInfo struct {
	RemoteAddr uint64
	RKey       uint32
}

// AtomicInfo are the operands of a compare-and-swap or fetch-and-add. The original remote value
// lands in the 8-byte local SGE.
type AtomicInfo struct {
	RemoteAddr uint64
	CompareAdd uint64 // compare value, or the addend of fetch-and-add
	Swap       uint64
	RKey       uint32
}

// UDInfo addresses a UD or GSI work request.
type UDInfo struct {
	AH         AddressHandle
	RemoteQPN  uint32
	RemoteQKey uint32 // a value with the high bit set means "use the QP's own Q_Key"
	PKeyIndex  uint16 // GSI only: the P_Key to send with
}

// FlushType is the placement type of a FLUSH (enum ibv_placement_type bits).
type FlushType uint8

// Flush placement types.
const (
	FlushGlobal     FlushType = 1 << 0 // IBV_FLUSH_GLOBAL: visible to every accessor
	FlushPersistent FlushType = 1 << 1 // IBV_FLUSH_PERSISTENT: durable
)

// FlushInfo describes a FLUSH; the remote region is RDMA (address and R_Key).
type FlushInfo struct {
	Length uint64
	Type   FlushType
	Level  mr.FlushLevel
}

// SendWR is a send work request (struct ibv_send_wr, plus the fields libibverbs sets through the
// ibv_wr_* calls: flush and atomic write). Fields an opcode does not use are ignored.
type SendWR struct {
	ID     uint64
	Opcode WROpcode
	Flags  SendFlags
	// SGList gathers the local data (or, for READ and atomics, scatters the result). It is copied at
	// post time. Must be empty with SendInline.
	SGList []mr.SGE
	// InlineData is the payload when Flags has SendInline; it is copied at post time, so the caller
	// may reuse it at once. Go cannot read SGE addresses as C does, hence a slice instead of SGList.
	InlineData     []byte
	ImmData        uint32 // *_WITH_IMM: sent as is, read back as WC.ImmData
	InvalidateRKey uint32 // SEND_WITH_INV: remote key to invalidate; LOCAL_INV: local key
	RDMA           RDMAInfo
	Atomic         AtomicInfo
	UD             UDInfo
	BindMW         mr.Bind
	// RegMR is the fast registration of REG_MR. Its page list is referenced, not copied, until the
	// work request completes.
	RegMR       mr.FastReg
	Flush       FlushInfo
	AtomicWrite [8]byte // ATOMIC_WRITE payload, stored remotely byte for byte
}

// RecvWR is a receive work request (struct ibv_recv_wr); SGList is copied at post time.
type RecvWR struct {
	ID     uint64
	SGList []mr.SGE
}
