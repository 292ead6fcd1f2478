package qp

import (
	"strconv"
	"strings"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
)

// AttrMask selects the fields of Attr a Modify sets, with the IBV_QP_* bit values.
type AttrMask uint32

// Attribute mask bits (enum ibv_qp_attr_mask).
const (
	AttrState            AttrMask = 1 << 0
	AttrCurState         AttrMask = 1 << 1
	AttrEnSQDAsyncNotify AttrMask = 1 << 2
	AttrAccessFlags      AttrMask = 1 << 3
	AttrPKeyIndex        AttrMask = 1 << 4
	AttrPort             AttrMask = 1 << 5
	AttrQKey             AttrMask = 1 << 6
	AttrAV               AttrMask = 1 << 7
	AttrPathMTU          AttrMask = 1 << 8
	AttrTimeout          AttrMask = 1 << 9
	AttrRetryCnt         AttrMask = 1 << 10
	AttrRNRRetry         AttrMask = 1 << 11
	AttrRQPSN            AttrMask = 1 << 12
	AttrMaxQPRdAtomic    AttrMask = 1 << 13
	AttrAltPath          AttrMask = 1 << 14
	AttrMinRNRTimer      AttrMask = 1 << 15
	AttrSQPSN            AttrMask = 1 << 16
	AttrMaxDestRdAtomic  AttrMask = 1 << 17
	AttrPathMigState     AttrMask = 1 << 18
	AttrCap              AttrMask = 1 << 19
	AttrDestQPN          AttrMask = 1 << 20
	AttrRateLimit        AttrMask = 1 << 25
)

var attrMaskNames = [...]struct {
	bit  AttrMask
	name string
}{
	{AttrState, "STATE"}, {AttrCurState, "CUR_STATE"}, {AttrEnSQDAsyncNotify, "EN_SQD_ASYNC_NOTIFY"},
	{AttrAccessFlags, "ACCESS_FLAGS"}, {AttrPKeyIndex, "PKEY_INDEX"}, {AttrPort, "PORT"},
	{AttrQKey, "QKEY"}, {AttrAV, "AV"}, {AttrPathMTU, "PATH_MTU"}, {AttrTimeout, "TIMEOUT"},
	{AttrRetryCnt, "RETRY_CNT"}, {AttrRNRRetry, "RNR_RETRY"}, {AttrRQPSN, "RQ_PSN"},
	{AttrMaxQPRdAtomic, "MAX_QP_RD_ATOMIC"}, {AttrAltPath, "ALT_PATH"},
	{AttrMinRNRTimer, "MIN_RNR_TIMER"}, {AttrSQPSN, "SQ_PSN"},
	{AttrMaxDestRdAtomic, "MAX_DEST_RD_ATOMIC"}, {AttrPathMigState, "PATH_MIG_STATE"},
	{AttrCap, "CAP"}, {AttrDestQPN, "DEST_QPN"}, {AttrRateLimit, "RATE_LIMIT"},
}

// String lists the set bits by their libibverbs names without the IBV_QP_ prefix, joined by "|".
func (m AttrMask) String() string {
	if m == 0 {
		return "0"
	}
	var b strings.Builder
	for _, n := range attrMaskNames {
		if m&n.bit != 0 {
			if b.Len() > 0 {
				b.WriteByte('|')
			}
			b.WriteString(n.name)
			m &^= n.bit
		}
	}
	if m != 0 {
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		b.WriteString("0x")
		b.WriteString(strconv.FormatUint(uint64(m), 16))
	}
	return b.String()
}

// GlobalRoute is the GRH part of an address vector (struct ibv_global_route). On RoCEv2 it carries
// the IP addressing: DGID is the peer's IPv6 or IPv4-mapped address.
type GlobalRoute struct {
	DGID         [16]byte
	FlowLabel    uint32 // 20 bits; also seeds the UDP source port
	SGIDIndex    uint8  // index into the local GID table: the source address
	HopLimit     uint8  // IP TTL / hop limit
	TrafficClass uint8  // IP DSCP and ECN bits
}

// AddressVector says how to reach a peer (struct ibv_ah_attr): the primary path of a connected QP
// and the destination of an address handle. RoCE requires IsGlobal.
type AddressVector struct {
	GRH         GlobalRoute
	DLID        uint16 // unused on RoCE
	SL          uint8  // service level, 4 bits
	SrcPathBits uint8  // unused on RoCE
	StaticRate  uint8  // enum ibv_rate; stored, not enforced
	IsGlobal    bool
	PortNum     uint8
}

// Caps are the queue capacities of a QP (struct ibv_qp_cap). CreateQP validates them against the
// device limits and reports the capacities actually provided, which gorxe makes equal to the request.
type Caps struct {
	MaxSendWR     int
	MaxRecvWR     int
	MaxSendSGE    int
	MaxRecvSGE    int
	MaxInlineData int
}

// Attr holds a QP's modifiable attributes (struct ibv_qp_attr). Modify reads the fields its mask
// names; Query fills all of them. Alternate-path fields are absent: RoCE has no APM.
type Attr struct {
	State            State
	CurState         State
	PathMigState     MigState
	PathMTU          MTU
	QKey             uint32
	RQPSN            uint32 // 24 bits; Modify masks higher bits off
	SQPSN            uint32 // 24 bits; Modify masks higher bits off
	DestQPNum        uint32
	AccessFlags      mr.Access // remote rights granted to incoming requests
	Cap              Caps
	AHAttr           AddressVector
	PKeyIndex        uint16
	EnSQDAsyncNotify bool
	SQDraining       bool
	MaxRdAtomic      uint8 // outstanding RDMA READ/atomic requests as initiator (rounded up to a power of two)
	MaxDestRdAtomic  uint8 // responder resources (rounded up to a power of two)
	MinRNRTimer      uint8 // 5-bit RNR NAK timer code
	PortNum          uint8
	Timeout          uint8 // local ACK timeout 4.096 µs × 2^Timeout; 0 disables the timer
	RetryCnt         uint8 // 3 bits
	RNRRetry         uint8 // 3 bits; 7 retries forever
}

// InitAttr are a QP's creation parameters (struct ibv_qp_init_attr).
type InitAttr struct {
	Context  any // returned by QP.Context (qp_context); the facade keeps its public QP there
	SendCQ   *cq.CQ
	RecvCQ   *cq.CQ
	SRQ      *SRQ // when set, receives consume the SRQ and Cap.MaxRecvWR/MaxRecvSGE are ignored
	Cap      Caps
	Type     Type
	SQSigAll bool // every send WR completes with a WC, as if SendSignaled were always set
}

// allowedQPAccess are the access rights a QP can grant to incoming requests.
const allowedQPAccess = mr.AccessLocalWrite | mr.AccessRemoteWrite | mr.AccessRemoteRead |
	mr.AccessRemoteAtomic | mr.AccessFlushGlobal | mr.AccessFlushPersistent
