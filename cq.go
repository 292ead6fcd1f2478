package gorxe

import (
	"context"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/packet"
)

// WC is a work completion, field for field libibverbs' struct ibv_wc. WRID, Status, Opcode (for
// successes) and QPNum hold for every completion; the others depend on the opcode.
//
//   - WRID: the wr_id of the work request.
//   - Status: WCSuccess or why it failed.
//   - Opcode: which operation completed.
//   - VendorErr: gorxe's detail for error statuses.
//   - ByteLen: bytes received, or the message length on the send side.
//   - ImmData: the immediate data, as the sender's SendWR.ImmData (valid with WCFlagWithImm).
//   - InvalidatedRKey: the R_Key a SEND_WITH_INV invalidated (valid with WCFlagWithInv).
//   - QPNum: the local QP.
//   - SrcQP: UD: the sender's QP.
//   - WCFlags: which optional fields are valid; WCFlagGRH: a 40-byte GRH precedes UD data.
//   - PKeyIndex: GSI: the index of the P_Key the packet carried.
//   - SL: service level.
//   - SLID, DLIDPathBits: always 0 on RoCE.
type WC = cq.WC

// WCStatus is the outcome of a work request (enum ibv_wc_status); WCStatus.String gives
// ibv_wc_status_str's text.
type WCStatus = cq.Status

// Completion statuses (IBV_WC_*).
const (
	WCSuccess          = cq.WCSuccess          // IBV_WC_SUCCESS
	WCLocLenErr        = cq.WCLocLenErr        // IBV_WC_LOC_LEN_ERR
	WCLocQPOpErr       = cq.WCLocQPOpErr       // IBV_WC_LOC_QP_OP_ERR
	WCLocEECOpErr      = cq.WCLocEECOpErr      // IBV_WC_LOC_EEC_OP_ERR
	WCLocProtErr       = cq.WCLocProtErr       // IBV_WC_LOC_PROT_ERR
	WCWRFlushErr       = cq.WCWRFlushErr       // IBV_WC_WR_FLUSH_ERR
	WCMWBindErr        = cq.WCMWBindErr        // IBV_WC_MW_BIND_ERR
	WCBadRespErr       = cq.WCBadRespErr       // IBV_WC_BAD_RESP_ERR
	WCLocAccessErr     = cq.WCLocAccessErr     // IBV_WC_LOC_ACCESS_ERR
	WCRemInvReqErr     = cq.WCRemInvReqErr     // IBV_WC_REM_INV_REQ_ERR
	WCRemAccessErr     = cq.WCRemAccessErr     // IBV_WC_REM_ACCESS_ERR
	WCRemOpErr         = cq.WCRemOpErr         // IBV_WC_REM_OP_ERR
	WCRetryExcErr      = cq.WCRetryExcErr      // IBV_WC_RETRY_EXC_ERR
	WCRNRRetryExcErr   = cq.WCRNRRetryExcErr   // IBV_WC_RNR_RETRY_EXC_ERR
	WCLocRDDViolErr    = cq.WCLocRDDViolErr    // IBV_WC_LOC_RDD_VIOL_ERR
	WCRemInvRDReqErr   = cq.WCRemInvRDReqErr   // IBV_WC_REM_INV_RD_REQ_ERR
	WCRemAbortErr      = cq.WCRemAbortErr      // IBV_WC_REM_ABORT_ERR
	WCInvEECNErr       = cq.WCInvEECNErr       // IBV_WC_INV_EECN_ERR
	WCInvEECStateErr   = cq.WCInvEECStateErr   // IBV_WC_INV_EEC_STATE_ERR
	WCFatalErr         = cq.WCFatalErr         // IBV_WC_FATAL_ERR
	WCRespTimeoutErr   = cq.WCRespTimeoutErr   // IBV_WC_RESP_TIMEOUT_ERR
	WCGeneralErr       = cq.WCGeneralErr       // IBV_WC_GENERAL_ERR
	WCTMErr            = cq.WCTMErr            // IBV_WC_TM_ERR
	WCTMRndvIncomplete = cq.WCTMRndvIncomplete // IBV_WC_TM_RNDV_INCOMPLETE
)

// WCOpcode says which operation a completion reports (enum ibv_wc_opcode).
type WCOpcode = cq.Opcode

// Completion opcodes (IBV_WC_*).
const (
	WCSend            = cq.OpcodeSend            // IBV_WC_SEND
	WCRDMAWrite       = cq.OpcodeRDMAWrite       // IBV_WC_RDMA_WRITE
	WCRDMARead        = cq.OpcodeRDMARead        // IBV_WC_RDMA_READ
	WCCompSwap        = cq.OpcodeCompSwap        // IBV_WC_COMP_SWAP
	WCFetchAdd        = cq.OpcodeFetchAdd        // IBV_WC_FETCH_ADD
	WCBindMW          = cq.OpcodeBindMW          // IBV_WC_BIND_MW
	WCLocalInv        = cq.OpcodeLocalInv        // IBV_WC_LOCAL_INV
	WCTSO             = cq.OpcodeTSO             // IBV_WC_TSO
	WCFlush           = cq.OpcodeFlush           // IBV_WC_FLUSH
	WCAtomicWrite     = cq.OpcodeAtomicWrite     // IBV_WC_ATOMIC_WRITE
	WCRegMR           = cq.OpcodeRegMR           // the kernel's IB_WC_REG_MR
	WCRecv            = cq.OpcodeRecv            // IBV_WC_RECV
	WCRecvRDMAWithImm = cq.OpcodeRecvRDMAWithImm // IBV_WC_RECV_RDMA_WITH_IMM
)

// WCFlags say which optional fields of a WC are valid (IBV_WC_* flags).
type WCFlags = cq.WCFlags

// Completion flags.
const (
	WCFlagGRH      = cq.WCFlagGRH      // IBV_WC_GRH: GRHSize bytes of GRH precede UD data
	WCFlagWithImm  = cq.WCFlagWithImm  // IBV_WC_WITH_IMM: ImmData is valid
	WCFlagIPCsumOK = cq.WCFlagIPCsumOK // IBV_WC_IP_CSUM_OK (never set)
	WCFlagWithInv  = cq.WCFlagWithInv  // IBV_WC_WITH_INV: InvalidatedRKey is valid
)

// GRHSize is the number of bytes a UD receive buffer must keep in front of the payload: a UD or
// multicast datagram lands GRHSize bytes into the receive's buffer, after its network header
// (the IPv6 header, or for IPv4 20 unused bytes and the IPv4 header), as on rxe. It is
// sizeof(struct ibv_grh), for which libibverbs has no constant of its own.
const GRHSize = packet.GRHSize

// MaxCQE is the largest CQ a device creates (ibv_device_attr.max_cqe).
const MaxCQE = cq.MaxCQE

// CQ is a completion queue (ibv_cq).
type CQ struct {
	dev *Device
	cq  *cq.CQ
	ch  *CompChannel
}

// CreateCQ creates a completion queue of exactly cqe entries (ibv_create_cq). With a non-nil
// channel, ReqNotify makes the CQ report its next completion on that channel.
//
// How large a CQ must be: at least the sum of the depths of the queues that complete into it,
// MaxSendWR of each QP whose send CQ it is, MaxRecvWR of each QP whose receive CQ it is, and for QPs
// on an SRQ the SRQ's MaxWR instead (once, however many of them share this CQ). Such a CQ never overruns, however
// the program posts and polls, because a work request keeps its queue slot until its completion
// has been polled, as on hardware: a post finds the queue full (ErrQueueFull) rather than the CQ.
// An unsignaled send work request keeps its slot until the completion of a later signaled one of
// the same queue is polled, so a program that posts only unsignaled requests fills its send queue
// for good; signal one in every so many, as perftest does. Error and flush completions count like
// any other. A CQ that does overrun enters the error state (Err returns ErrCQOverflow, the device
// raises EventCQErr) and a QP whose completion it refused goes to QPStateErr.
func (d *Device) CreateCQ(cqe int, channel *CompChannel) (*CQ, error) {
	return d.createCQ(channel, func(o cq.Options) (*cq.CQ, error) { return cq.New(cqe, o) })
}

// CQRing is a CQ's storage in memory its consumer polls without calling gorxe, with
// CQRingHeader's positions and CQRingEntry's completions; cq.Ring gives the protocol and layout.
type (
	CQRing       = cq.Ring
	CQRingHeader = cq.RingHeader
	CQRingEntry  = cq.RingEntry
)

// CreateCQOnRing creates a CQ of len(r.Entries) entries that writes its completions to r, for a
// consumer outside Go that polls them there itself, as the C library's poll_cq does (the way
// rxe's provider reads the CQ ring the kernel fills): no call into gorxe per poll. The consumer
// arms notifications by storing the header's Notify, and keeps each queue's count of outstanding
// work requests, adding back each entry's Slots as it polls, since the CQ cannot see the poll.
// r's memory must stay valid until Destroy. Resize such a CQ with ResizeRing.
func (d *Device) CreateCQOnRing(r CQRing, channel *CompChannel) (*CQ, error) {
	return d.createCQ(channel, func(o cq.Options) (*cq.CQ, error) { return cq.NewRing(r, o) })
}

func (d *Device) createCQ(channel *CompChannel, create func(cq.Options) (*cq.CQ, error)) (*CQ, error) {
	if err := d.check("create_cq"); err != nil {
		return nil, err
	}
	c := &CQ{dev: d, ch: channel}
	opts := cq.Options{Context: c, OnError: d.cqError}
	if channel != nil {
		if channel.dev != d {
			return nil, argErr("create_cq", ErrWrongDevice, "completion channel")
		}
		opts.Channel = channel.ch
	}
	inner, err := create(opts)
	if err != nil {
		return nil, opErr("create_cq", err)
	}
	c.cq = inner
	return c, nil
}

// Poll moves up to len(wcs) completions, oldest first, into wcs and returns how many
// (ibv_poll_cq). It never blocks and never allocates; it keeps working after the device is
// closed, so flushed work can still be collected. In latency mode (Config.BusyPoll), a poll that
// finds the CQ empty first runs whatever the network already holds, on the caller's goroutine.
func (c *CQ) Poll(wcs []WC) int {
	if n := c.cq.Poll(wcs); n > 0 || c.dev.cfg.BusyPoll == 0 {
		return n
	}
	if !c.dev.pollNetwork() {
		return 0
	}
	return c.cq.Poll(wcs)
}

// ReqNotify arms the CQ to report one completion event on its channel (ibv_req_notify_cq): for the
// next completion, or with solicitedOnly for the next solicited or unsuccessful one.
func (c *CQ) ReqNotify(solicitedOnly bool) error {
	if err := c.dev.check("req_notify_cq"); err != nil {
		return err
	}
	return opErr("req_notify_cq", c.cq.ReqNotify(solicitedOnly))
}

// AckEvents acknowledges n completion events GetEvent returned for this CQ (ibv_ack_cq_events).
// It works after Close too, for the events GetEvent still hands out then.
func (c *CQ) AckEvents(n int) error { return opErr("ack_cq_events", c.cq.AckEvents(n)) }

// Resize changes the CQ's capacity, keeping the queued completions (ibv_resize_cq).
func (c *CQ) Resize(cqe int) error {
	if err := c.dev.check("resize_cq"); err != nil {
		return err
	}
	return opErr("resize_cq", c.cq.Resize(cqe))
}

// ResizeRing moves a CreateCQOnRing CQ's queued completions, in order, to r (ibv_resize_cq);
// the consumer polls r from then on and must not poll the old ring meanwhile.
func (c *CQ) ResizeRing(r CQRing) error {
	if err := c.dev.check("resize_cq"); err != nil {
		return err
	}
	return opErr("resize_cq", c.cq.ResizeRing(r))
}

// CQE returns the capacity (ibv_cq.cqe).
func (c *CQ) CQE() int { return c.cq.CQE() }

// Channel returns the completion channel the CQ reports to, or nil.
func (c *CQ) Channel() *CompChannel { return c.ch }

// Err returns nil while the CQ works, and an error matching ErrCQOverflow after an overrun (the
// device also raises EventCQErr).
func (c *CQ) Err() error { return opErr("poll_cq", c.cq.Err()) }

// Destroy releases the CQ (ibv_destroy_cq). It fails with ErrInUse while QPs or SRQs complete into
// it, and with ErrEventsNotAcked while events GetEvent returned for it are unacknowledged:
// rdma-core's ibv_destroy_cq blocks until they are, which hangs a program that acknowledges on the
// destroying goroutine, while an error says what is missing. A Wait blocked on the CQ holds no
// such event: Destroy succeeds and the Wait returns ErrDestroyed.
func (c *CQ) Destroy() error {
	if err := c.dev.check("destroy_cq"); err != nil {
		return err
	}
	return opErr("destroy_cq", c.cq.Destroy())
}

// checkCQ validates a CQ argument of verb op on device d.
func (d *Device) checkCQ(op, what string, c *CQ) error {
	switch {
	case c == nil:
		return argErr(op, ErrNilObject, what+" is nil")
	case c.dev != d:
		return argErr(op, ErrWrongDevice, what)
	}
	return nil
}

// CompChannel delivers completion events of the CQs created on it (ibv_comp_channel).
type CompChannel struct {
	dev *Device
	ch  *cq.CompChannel
}

// CreateCompChannel creates a completion channel (ibv_create_comp_channel).
func (d *Device) CreateCompChannel() (*CompChannel, error) {
	if err := d.check("create_comp_channel"); err != nil {
		return nil, err
	}
	return &CompChannel{dev: d, ch: cq.NewCompChannel(d.done)}, nil
}

// GetEvent returns the CQ of the oldest completion event, waiting for one until ctx ends
// (ibv_get_cq_event). Acknowledge every event with CQ.AckEvents. Events already queued are
// returned even when ctx is done. Once the device is closed it returns the events still queued
// (Close flushes every QP first), then ErrDeviceClosed; once the channel is destroyed,
// ErrDestroyed.
func (ch *CompChannel) GetEvent(ctx context.Context) (*CQ, error) {
	c, err := ch.ch.GetEvent(ctx)
	if err != nil {
		return nil, opErr("get_cq_event", err)
	}
	return cqOwner(c), nil
}

// TakeEvent is GetEvent for a consumer that counts acknowledgements itself (the C library counts
// them as libibverbs does): the event it returns needs no CQ.AckEvents, and CQ.Destroy never
// waits for it.
func (ch *CompChannel) TakeEvent(ctx context.Context) (*CQ, error) {
	c, err := ch.ch.TakeEvent(ctx)
	if err != nil {
		return nil, opErr("get_cq_event", err)
	}
	return cqOwner(c), nil
}

// Destroy releases the channel (ibv_destroy_comp_channel); it fails with ErrInUse while CQs use
// it, as rdma-core's does (EBUSY). Blocked GetEvent calls return ErrDestroyed.
func (ch *CompChannel) Destroy() error {
	if err := ch.dev.check("destroy_comp_channel"); err != nil {
		return err
	}
	return opErr("destroy_comp_channel", ch.ch.Destroy())
}
