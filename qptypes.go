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

// QPAttr holds a QP's modifiable attributes (struct ibv_qp_attr). Modify reads the fields its
// mask names; Query fills all of them. Alternate-path fields are absent: RoCE has no APM.
//
//   - State, CurState: the target state (QPAttrState) and, with QPAttrCurState, the state the
//     caller believes the QP is in.
//   - PathMigState: path migration state (QPAttrPathMigState); reported, changes nothing.
//   - PathMTU: the path MTU of a connected QP (QPAttrPathMTU).
//   - QKey: the Q_Key of a UD or GSI QP (QPAttrQKey).
//   - RQPSN, SQPSN: the first receive and send PSNs, 24 bits (QPAttrRQPSN, QPAttrSQPSN).
//   - DestQPNum: the peer's QP number (QPAttrDestQPN).
//   - AccessFlags: the remote rights granted to incoming requests (QPAttrAccessFlags).
//   - Cap: the queue capacities (read only: Query reports them).
//   - AHAttr: the primary path, an address vector with a GRH (QPAttrAV).
//   - PKeyIndex: index into the P_Key table, always 0 (QPAttrPKeyIndex).
//   - EnSQDAsyncNotify: raise EventSQDrained when SQD is reached (QPAttrEnSQDAsyncNotify).
//   - SQDraining: whether an SQD drain is in progress (read only).
//   - MaxRdAtomic: outstanding RDMA READ and atomic requests as initiator (QPAttrMaxQPRdAtomic).
//   - MaxDestRdAtomic: responder resources for them (QPAttrMaxDestRdAtomic).
//   - MinRNRTimer: the 5-bit RNR NAK timer code (QPAttrMinRNRTimer).
//   - PortNum: the port, always 1 (QPAttrPort).
//   - Timeout: the local ACK timeout, 4.096 µs × 2^Timeout; 0 disables it (QPAttrTimeout).
//   - RetryCnt: retries after a timeout or sequence error, 3 bits (QPAttrRetryCnt).
//   - RNRRetry: retries after an RNR NAK, 3 bits; 7 retries forever (QPAttrRNRRetry).
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

// QPCap are the queue capacities of a QP (struct ibv_qp_cap): MaxSendWR and MaxRecvWR work
// requests outstanding, MaxSendSGE and MaxRecvSGE scatter/gather elements per request, and
// MaxInlineData bytes of inline payload. CreateQP checks them against the device limits and
// provides exactly them. A work request is outstanding until its completion has been polled (an
// unsignaled send request until a later signaled one's has), which is what lets a CQ as deep as
// its queues never overrun (see CreateCQ).
type QPCap = qp.Caps

// AHAttr is an address vector (struct ibv_ah_attr): the primary path of a connected QP, or the
// destination of an address handle. RoCE requires IsGlobal and a GRH.
//
//   - GRH: the IP addressing (see GlobalRoute); DGID is the peer's GID.
//   - IsGlobal: a GRH is present; must be true on RoCE.
//   - SL: service level, 4 bits.
//   - StaticRate: enum ibv_rate; stored, not enforced.
//   - PortNum: the local port, 1.
//   - DLID, SrcPathBits: unused on RoCE.
type AHAttr = qp.AddressVector

// GlobalRoute is the GRH part of an AHAttr (struct ibv_global_route), on RoCEv2 the IP addressing.
//
//   - DGID: the peer's GID, its IPv6 or IPv4-mapped address.
//   - SGIDIndex: the local GID table index packets leave from.
//   - FlowLabel: IPv6 flow label, 20 bits; it also seeds the UDP source port.
//   - HopLimit: IP TTL or hop limit.
//   - TrafficClass: IP DSCP and ECN bits.
type GlobalRoute = qp.GlobalRoute

// FlowLabelMask keeps the 20 bits of GlobalRoute.FlowLabel; a larger label is an *AttrError.
const FlowLabelMask = packet.FlowLabelMask

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

// SendWR is a send work request (struct ibv_send_wr, plus what libibverbs sets through the
// ibv_wr_* calls). Fields an opcode does not use are ignored.
//
//   - ID: wr_id, returned in the completion's WC.WRID.
//   - Opcode: the operation (WRSend, WRRDMAWrite, ...).
//   - Flags: SendSignaled, SendFence, SendSolicited, SendInline.
//   - SGList: the local buffers, gathered for sends and writes, scattered into for READ and atomic
//     results; copied at post time. Empty with SendInline.
//   - InlineData: the payload with SendInline, copied at post time.
//   - ImmData: the immediate data of the *_WITH_IMM opcodes, as the receiver's WC.ImmData reads it.
//   - InvalidateRKey: the remote key SEND_WITH_INV invalidates; the local key of LOCAL_INV.
//   - RDMA: remote address and R_Key of RDMA READ/WRITE, FLUSH and ATOMIC_WRITE (RDMAInfo).
//   - Atomic: remote address, R_Key and operands of compare-and-swap and fetch-and-add (AtomicInfo).
//   - UD: destination of a UD or GSI send (UDInfo).
//   - BindMW: the window bind of WRBindMW (MWBind).
//   - RegMR: the fast registration of WRRegMR (FastReg); its page list is referenced until completion.
//   - Flush: length, type and level of WRFlush (FlushInfo).
//   - AtomicWrite: the 8 bytes WRAtomicWrite stores remotely.
type SendWR = qp.SendWR

// RecvWR is a receive work request (struct ibv_recv_wr): ID is the wr_id returned in WC.WRID and
// SGList the buffers an incoming message is scattered into, copied at post time.
type RecvWR = qp.RecvWR

// RDMAInfo is the remote buffer of an RDMA READ/WRITE, FLUSH or ATOMIC_WRITE (wr.rdma): RemoteAddr
// in the peer's region whose remote key is RKey.
type RDMAInfo = qp.RDMAInfo

// AtomicInfo are the operands of a compare-and-swap or fetch-and-add (wr.atomic): the 8-byte
// aligned RemoteAddr in the region of RKey, CompareAdd (the compare value, or the addend of
// fetch-and-add) and Swap (the value compare-and-swap writes). The original remote value lands in the
// work request's 8-byte SGE.
type AtomicInfo = qp.AtomicInfo

// UDInfo addresses a UD or GSI send (wr.ud): AH is the destination's address handle (an *AH),
// RemoteQPN and RemoteQKey the destination QP and its Q_Key (a Q_Key with the high bit set means the
// QP's own), and PKeyIndex, for GSI only, the P_Key to send with.
type UDInfo = qp.UDInfo

// FlushInfo describes a FLUSH work request: Length bytes from SendWR.RDMA, Type the placement type
// (FlushGlobal, FlushPersistent) and Level its selectivity (FlushRange, FlushMR).
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
// keys): MWKey the window's current rkey and NewKey its rkey after the bind (usually IncKey(MWKey)),
// MRKey the lkey of the region bound to, Addr and Length the window's range in it (Length 0 unbinds
// a type 1 window) and Access the remote rights it grants.
type MWBind = mr.Bind

// FastReg is the registration carried by a REG_MR work request: Key the region's new key (same
// index, usually IncKey of the old one), Access its rights, IOVA and Length the range peers address,
// Pages the page list (each PageSize bytes, a power of two of at least 4 KiB, copied; the memory is
// referenced until invalidation) and Offset where the region starts in Pages[0].
type FastReg = mr.FastReg

// SRQAttr are the attributes of a shared receive queue (struct ibv_srq_attr): MaxWR work requests
// of at most MaxSGE elements, and SRQLimit, the armed low-water mark (0: not armed).
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
