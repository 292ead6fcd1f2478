package gorxe

import (
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// MTU is an InfiniBand path MTU (enum ibv_mtu): the payload size of one packet, not an IP MTU.
type MTU = qp.MTU

// Path MTUs (IBV_MTU_*).
const (
	MTU256  = qp.MTU256  // IBV_MTU_256
	MTU512  = qp.MTU512  // IBV_MTU_512
	MTU1024 = qp.MTU1024 // IBV_MTU_1024
	MTU2048 = qp.MTU2048 // IBV_MTU_2048
	MTU4096 = qp.MTU4096 // IBV_MTU_4096
)

// MTUFromBytes returns the largest path MTU whose payload fits in n bytes, and MTU256 when n is
// smaller than 256.
func MTUFromBytes(n int) MTU {
	if m, ok := qp.MTUFromBytes(n); ok {
		return m
	}
	return MTU256
}

// QPType is a QP transport type (enum ibv_qp_type).
type QPType = qp.Type

// QP types gorxe implements, like rxe: no XRC, no raw packet QPs.
const (
	QPTypeRC  = qp.TypeRC  // IBV_QPT_RC: reliable connected
	QPTypeUC  = qp.TypeUC  // IBV_QPT_UC: unreliable connected
	QPTypeUD  = qp.TypeUD  // IBV_QPT_UD: unreliable datagram
	QPTypeGSI = qp.TypeGSI // the kernel's IB_QPT_GSI: QP number 1, for MADs and RDMA-CM
)

// QPState is a QP state (enum ibv_qp_state).
type QPState = qp.State

// QP states (IBV_QPS_*).
const (
	QPStateReset = qp.StateReset // IBV_QPS_RESET
	QPStateInit  = qp.StateInit  // IBV_QPS_INIT
	QPStateRTR   = qp.StateRTR   // IBV_QPS_RTR: ready to receive
	QPStateRTS   = qp.StateRTS   // IBV_QPS_RTS: ready to send
	QPStateSQD   = qp.StateSQD   // IBV_QPS_SQD: send queue drained
	QPStateSQE   = qp.StateSQE   // IBV_QPS_SQE: send queue error
	QPStateErr   = qp.StateErr   // IBV_QPS_ERR
)

// MigState is a path migration state (enum ibv_mig_state); RoCE has no alternate paths, so it is
// reported but changes nothing.
type MigState = qp.MigState

// Path migration states (IBV_MIG_*).
const (
	MigMigrated = qp.MigMigrated // IBV_MIG_MIGRATED
	MigRearm    = qp.MigRearm    // IBV_MIG_REARM
	MigArmed    = qp.MigArmed    // IBV_MIG_ARMED
)

// QPAttr holds a QP's modifiable attributes (struct ibv_qp_attr).
type QPAttr = qp.Attr

// QPAttrMask selects the QPAttr fields Modify sets (enum ibv_qp_attr_mask).
type QPAttrMask = qp.AttrMask

// QP attribute mask bits (IBV_QP_*).
const (
	QPAttrState            = qp.AttrState            // IBV_QP_STATE
	QPAttrCurState         = qp.AttrCurState         // IBV_QP_CUR_STATE
	QPAttrEnSQDAsyncNotify = qp.AttrEnSQDAsyncNotify // IBV_QP_EN_SQD_ASYNC_NOTIFY
	QPAttrAccessFlags      = qp.AttrAccessFlags      // IBV_QP_ACCESS_FLAGS
	QPAttrPKeyIndex        = qp.AttrPKeyIndex        // IBV_QP_PKEY_INDEX
	QPAttrPort             = qp.AttrPort             // IBV_QP_PORT
	QPAttrQKey             = qp.AttrQKey             // IBV_QP_QKEY
	QPAttrAV               = qp.AttrAV               // IBV_QP_AV
	QPAttrPathMTU          = qp.AttrPathMTU          // IBV_QP_PATH_MTU
	QPAttrTimeout          = qp.AttrTimeout          // IBV_QP_TIMEOUT
	QPAttrRetryCnt         = qp.AttrRetryCnt         // IBV_QP_RETRY_CNT
	QPAttrRNRRetry         = qp.AttrRNRRetry         // IBV_QP_RNR_RETRY
	QPAttrRQPSN            = qp.AttrRQPSN            // IBV_QP_RQ_PSN
	QPAttrMaxQPRdAtomic    = qp.AttrMaxQPRdAtomic    // IBV_QP_MAX_QP_RD_ATOMIC
	QPAttrAltPath          = qp.AttrAltPath          // IBV_QP_ALT_PATH
	QPAttrMinRNRTimer      = qp.AttrMinRNRTimer      // IBV_QP_MIN_RNR_TIMER
	QPAttrSQPSN            = qp.AttrSQPSN            // IBV_QP_SQ_PSN
	QPAttrMaxDestRdAtomic  = qp.AttrMaxDestRdAtomic  // IBV_QP_MAX_DEST_RD_ATOMIC
	QPAttrPathMigState     = qp.AttrPathMigState     // IBV_QP_PATH_MIG_STATE
	QPAttrCap              = qp.AttrCap              // IBV_QP_CAP
	QPAttrDestQPN          = qp.AttrDestQPN          // IBV_QP_DEST_QPN
	QPAttrRateLimit        = qp.AttrRateLimit        // IBV_QP_RATE_LIMIT
)

// QPCap are the queue capacities of a QP (struct ibv_qp_cap).
type QPCap = qp.Caps

// AHAttr is an address vector (struct ibv_ah_attr): the primary path of a connected QP, or the
// destination of an address handle. RoCE requires IsGlobal and a GRH whose DGID is the peer's
// GID.
type AHAttr = qp.AddressVector

// GlobalRoute is the GRH part of an AHAttr (struct ibv_global_route): on RoCEv2 the IP addressing.
type GlobalRoute = qp.GlobalRoute

// AH is an address handle (ibv_ah) for UD and GSI sends; create it with PD.CreateAH.
type AH = qp.AH

// WROpcode is the operation of a send work request (enum ibv_wr_opcode).
type WROpcode = qp.WROpcode

// Send work request opcodes (IBV_WR_*).
const (
	WRRDMAWrite         = qp.WRRDMAWrite         // IBV_WR_RDMA_WRITE
	WRRDMAWriteWithImm  = qp.WRRDMAWriteWithImm  // IBV_WR_RDMA_WRITE_WITH_IMM
	WRSend              = qp.WRSend              // IBV_WR_SEND
	WRSendWithImm       = qp.WRSendWithImm       // IBV_WR_SEND_WITH_IMM
	WRRDMARead          = qp.WRRDMARead          // IBV_WR_RDMA_READ
	WRAtomicCmpAndSwp   = qp.WRAtomicCmpAndSwp   // IBV_WR_ATOMIC_CMP_AND_SWP
	WRAtomicFetchAndAdd = qp.WRAtomicFetchAndAdd // IBV_WR_ATOMIC_FETCH_AND_ADD
	WRLocalInv          = qp.WRLocalInv          // IBV_WR_LOCAL_INV
	WRBindMW            = qp.WRBindMW            // IBV_WR_BIND_MW
	WRSendWithInv       = qp.WRSendWithInv       // IBV_WR_SEND_WITH_INV
	WRFlush             = qp.WRFlush             // IBV_WR_FLUSH
	WRAtomicWrite       = qp.WRAtomicWrite       // IBV_WR_ATOMIC_WRITE
	WRRegMR             = qp.WRRegMR             // the kernel's IB_WR_REG_MR (fast registration)
)

// SendFlags are the IBV_SEND_* flags of a send work request.
type SendFlags = qp.SendFlags

// Send flags (IBV_SEND_*).
const (
	SendFence     = qp.SendFence     // IBV_SEND_FENCE: wait for earlier READs and atomics
	SendSignaled  = qp.SendSignaled  // IBV_SEND_SIGNALED: complete with a WC on success
	SendSolicited = qp.SendSolicited // IBV_SEND_SOLICITED: set the solicited event bit
	SendInline    = qp.SendInline    // IBV_SEND_INLINE: payload in SendWR.InlineData
)

// SendWR is a send work request (struct ibv_send_wr). Fields an opcode does not use are ignored;
// SGList and InlineData are copied at post time.
type SendWR = qp.SendWR

// RecvWR is a receive work request (struct ibv_recv_wr); SGList is copied at post time.
type RecvWR = qp.RecvWR

// RDMAInfo is the remote buffer of an RDMA READ/WRITE, FLUSH or ATOMIC_WRITE (wr.rdma).
type RDMAInfo = qp.RDMAInfo

// AtomicInfo are the operands of a compare-and-swap or fetch-and-add (wr.atomic).
type AtomicInfo = qp.AtomicInfo

// UDInfo addresses a UD or GSI send (wr.ud).
type UDInfo = qp.UDInfo

// FlushInfo describes a FLUSH work request.
type FlushInfo = qp.FlushInfo

// FlushType is the placement type of a FLUSH (IBV_FLUSH_GLOBAL, IBV_FLUSH_PERSISTENT).
type FlushType = qp.FlushType

// Flush placement types.
const (
	FlushGlobal     = qp.FlushGlobal     // IBV_FLUSH_GLOBAL
	FlushPersistent = qp.FlushPersistent // IBV_FLUSH_PERSISTENT
)

// FlushLevel is the selectivity of a FLUSH: a range, or the whole region.
type FlushLevel = mr.FlushLevel

// Flush selectivity levels.
const (
	FlushRange = mr.FlushRange // IBV_FLUSH_RANGE
	FlushMR    = mr.FlushMR    // IBV_FLUSH_MR
)

// MWBind is the bind carried by a BIND_MW work request (struct ibv_mw_bind_info with the window's
// old and new rkey).
type MWBind = mr.Bind

// FastReg is the registration carried by a REG_MR work request.
type FastReg = mr.FastReg

// SRQAttr are the attributes of a shared receive queue (struct ibv_srq_attr).
type SRQAttr = qp.SRQAttr

// SRQAttrMask selects what SRQ.Modify changes (enum ibv_srq_attr_mask).
type SRQAttrMask = qp.SRQAttrMask

// SRQ attribute mask bits.
const (
	SRQMaxWR = qp.SRQMaxWR // IBV_SRQ_MAX_WR: resize
	SRQLimit = qp.SRQLimit // IBV_SRQ_LIMIT: arm the limit event
)

// GSIQKey is the Q_Key of the GSI QP (QP1), which carries connection manager MADs.
const GSIQKey = packet.GSIQKey

// Errors of QPs, SRQs and AHs, re-exported so users need import only gorxe.
var (
	ErrInvalidTransition = qp.ErrInvalidTransition // the state change is not in the IBTA table
	ErrMissingAttr       = qp.ErrMissingAttr       // the mask lacks an attribute the transition requires
	ErrExtraAttr         = qp.ErrExtraAttr         // the mask has an attribute the transition does not allow
	ErrCurState          = qp.ErrCurState          // cur_qp_state does not match the QP's state
	ErrSQDraining        = qp.ErrSQDraining        // the send queue is draining; only ERR is allowed
	ErrInvalidAttr       = qp.ErrInvalidAttr       // an attribute value is out of range
	ErrNotSupported      = qp.ErrNotSupported      // the feature is not supported (APM, RD, ...)
	ErrInvalidQPType     = qp.ErrInvalidType       // not RC, UC, UD or GSI
	ErrInvalidCaps       = qp.ErrInvalidCaps       // queue capacities exceed the device limits
	ErrMissingCQ         = qp.ErrMissingCQ         // a QP needs a send and a receive CQ
	ErrInvalidState      = qp.ErrInvalidState      // the QP state does not allow posting
	ErrInvalidOpcode     = qp.ErrInvalidOpcode     // the opcode is not allowed for the QP type
	ErrInvalidWR         = qp.ErrInvalidWR         // a malformed work request
	ErrTooManySGE        = qp.ErrTooManySGE        // more SGEs than the queue's max_sge
	ErrInlineTooLong     = qp.ErrInlineTooLong     // inline data longer than max_inline_data
	ErrMessageTooLong    = qp.ErrMessageTooLong    // a message longer than 2^31 bytes
	ErrQueueFull         = qp.ErrQueueFull         // the work queue is full
	ErrHasSRQ            = qp.ErrHasSRQ            // the QP uses an SRQ: post receives there
	ErrInvalidAH         = qp.ErrInvalidAH         // an invalid address handle or address vector
	ErrGSIExists         = qp.ErrGSIExists         // the device already has its GSI QP
	ErrQPTableFull       = qp.ErrTableFull         // no free QP number
)

// ModifyError details a rejected QP.Modify: the transition and the missing or disallowed
// attributes.
type ModifyError = qp.ModifyError

// AttrError names an attribute whose value is out of range.
type AttrError = qp.AttrError

// PostError names the work request a post stopped at (libibverbs' bad_wr): those before Index
// were posted.
type PostError = qp.PostError
