package transport

import "sync/atomic"

// Counters are the transport's per-device statistics, named after rxe's hardware counters
// (rxe_hw_counters.c) so numbers compare directly with a kernel peer's. Every field is updated
// atomically; read them with Load.
type Counters struct {
	SentPkts            atomic.Uint64 // sent_pkts
	RcvdPkts            atomic.Uint64 // rcvd_pkts
	DuplicateRequest    atomic.Uint64 // duplicate_request
	OutOfSeqRequest     atomic.Uint64 // out_of_seq_request
	RcvdRNRErr          atomic.Uint64 // rcvd_rnr_err: RNR NAKs received
	SendRNRErr          atomic.Uint64 // send_rnr_err: RNR NAKs sent
	RcvdSeqErr          atomic.Uint64 // rcvd_seq_err: PSN sequence error NAKs received
	RetryExceededErr    atomic.Uint64 // retry_exceeded_err
	RetryRNRExceededErr atomic.Uint64 // retry_rnr_exceeded_err
	CompleterRetryErr   atomic.Uint64 // completer_retry_err: retransmissions started
	// LateTimeouts counts retransmit timer expiries noticed so late that the local process was
	// evidently not running; they are not counted against retry_cnt (see lateExpiry).
	LateTimeouts atomic.Uint64 // late_timeouts (no rxe counter)
	SendErr      atomic.Uint64 // send_err
	RDMASends    atomic.Uint64 // rdma_sends: SEND work requests retired
	RDMARecvs    atomic.Uint64 // rdma_recvs: successful receive completions
	SentBytes    atomic.Uint64 // sent_bytes (payload)
	RcvdBytes    atomic.Uint64 // rcvd_bytes (payload)
	// NAKs an RC responder sent for requests it refused (class C). rxe has no counter for
	// them; without one, probing for keys or malformed requests would leave no trace.
	SentAccessNAK atomic.Uint64 // sent_access_nak: remote access error NAKs sent
	SentInvReqNAK atomic.Uint64 // sent_inv_req_nak: invalid request NAKs sent
	// Drops of packets that reached a QP but could not be used; the device layer counts drops
	// that happen before a QP is known (ICRC, P_Key, unknown QPN).
	DroppedPath    atomic.Uint64 // RC/UC packet from an address that is not the QP's path
	DroppedState   atomic.Uint64 // QP not in a state that receives this packet
	DroppedOpcode  atomic.Uint64 // opcode not valid for the QP type or sequence (UC/UD: silent)
	DroppedQKey    atomic.Uint64 // UD Q_Key mismatch (qkey_viol_cntr)
	DroppedAccess  atomic.Uint64 // UC RDMA WRITE failing its R_Key, range or access check
	DroppedNoRecv  atomic.Uint64 // UC/UD message with no receive WQE
	DroppedLength  atomic.Uint64 // UC/UD message longer than the receive buffer
	DroppedUnknown atomic.Uint64 // ACK or response matching no outstanding request
	DroppedBusy    atomic.Uint64 // RC request arriving while a long RDMA READ response is still being sent
}
