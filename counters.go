package gorxe

import "iter"

// Counters is a snapshot of a device's statistics. The first group carries the names of rxe's
// hardware counters (rdma statistic show), so numbers compare directly with a kernel peer's; the
// second counts received packets that were dropped, by reason. Counters.All lists them by name.
type Counters struct {
	SentPkts            uint64 // sent_pkts
	RcvdPkts            uint64 // rcvd_pkts: packets handed to a QP
	DuplicateRequest    uint64 // duplicate_request
	OutOfSeqRequest     uint64 // out_of_seq_request
	RcvdRNRErr          uint64 // rcvd_rnr_err: RNR NAKs received
	SendRNRErr          uint64 // send_rnr_err: RNR NAKs sent
	RcvdSeqErr          uint64 // rcvd_seq_err: sequence error NAKs received
	RetryExceededErr    uint64 // retry_exceeded_err
	RetryRNRExceededErr uint64 // retry_rnr_exceeded_err
	CompleterRetryErr   uint64 // completer_retry_err: retransmissions started
	SendErr             uint64 // send_err: datagrams the network refused
	LinkDowned          uint64 // link_downed (always 0: the port never goes down)
	RDMASends           uint64 // rdma_sends
	RDMARecvs           uint64 // rdma_recvs
	SentBytes           uint64 // sent_bytes (payload)
	RcvdBytes           uint64 // rcvd_bytes (payload)
	SentAccessNAK       uint64 // sent_access_nak: RC remote access error NAKs sent (no rxe counter)
	SentInvReqNAK       uint64 // sent_inv_req_nak: RC invalid request NAKs sent (no rxe counter)

	RcvdMalformed    uint64 // rcvd_malformed: not a valid RoCEv2 packet
	RcvdICRCErr      uint64 // rcvd_icrc_err: ICRC mismatch
	RcvdBadPKey      uint64 // rcvd_bad_pkey: P_Key not in the table (bad_pkey_cntr)
	RcvdUnknownQPN   uint64 // rcvd_unknown_qpn: no such QP, QP0 included
	RcvdNoMcastGroup uint64 // rcvd_no_mcast_group: multicast packet no QP joined for
	RcvdWrongPath    uint64 // rcvd_wrong_path: RC/UC packet not from the QP's peer address
	RcvdWrongState   uint64 // rcvd_wrong_state: QP not in a state that takes the packet
	RcvdBadOpcode    uint64 // rcvd_bad_opcode: opcode not valid for the QP or sequence
	RcvdBadAccess    uint64 // rcvd_bad_access: UC RDMA WRITE failing its R_Key, range or access check
	RcvdBusy         uint64 // rcvd_busy: RC request behind a long RDMA READ response still being sent
	QKeyViolation    uint64 // qkey_violation: UD Q_Key mismatch (qkey_viol_cntr)
	RcvdNoRecvWQE    uint64 // rcvd_no_recv_wqe: UC/UD message with no receive posted
	RcvdTooLong      uint64 // rcvd_too_long: UC/UD message longer than the receive buffer
	RcvdUnexpected   uint64 // rcvd_unexpected: ACK or response matching no request
	RcvdNetErr       uint64 // rcvd_net_err: errors reading from the network
}

// Counters returns a snapshot of the device's statistics. It works after Close too.
func (d *Device) Counters() Counters {
	t, r := &d.tc, &d.rx
	return Counters{
		SentPkts:            t.SentPkts.Load(),
		RcvdPkts:            t.RcvdPkts.Load(),
		DuplicateRequest:    t.DuplicateRequest.Load(),
		OutOfSeqRequest:     t.OutOfSeqRequest.Load(),
		RcvdRNRErr:          t.RcvdRNRErr.Load(),
		SendRNRErr:          t.SendRNRErr.Load(),
		RcvdSeqErr:          t.RcvdSeqErr.Load(),
		RetryExceededErr:    t.RetryExceededErr.Load(),
		RetryRNRExceededErr: t.RetryRNRExceededErr.Load(),
		CompleterRetryErr:   t.CompleterRetryErr.Load(),
		SendErr:             t.SendErr.Load(),
		RDMASends:           t.RDMASends.Load(),
		RDMARecvs:           t.RDMARecvs.Load(),
		SentBytes:           t.SentBytes.Load(),
		RcvdBytes:           t.RcvdBytes.Load(),
		SentAccessNAK:       t.SentAccessNAK.Load(),
		SentInvReqNAK:       t.SentInvReqNAK.Load(),
		RcvdMalformed:       r.malformed.Load(),
		RcvdICRCErr:         r.badICRC.Load(),
		RcvdBadPKey:         r.badPKey.Load(),
		RcvdUnknownQPN:      r.unknownQPN.Load(),
		RcvdNoMcastGroup:    r.noMcastQP.Load(),
		RcvdWrongPath:       t.DroppedPath.Load(),
		RcvdWrongState:      t.DroppedState.Load(),
		RcvdBadOpcode:       t.DroppedOpcode.Load(),
		RcvdBadAccess:       t.DroppedAccess.Load(),
		RcvdBusy:            t.DroppedBusy.Load(),
		QKeyViolation:       t.DroppedQKey.Load(),
		RcvdNoRecvWQE:       t.DroppedNoRecv.Load(),
		RcvdTooLong:         t.DroppedLength.Load(),
		RcvdUnexpected:      t.DroppedUnknown.Load(),
		RcvdNetErr:          r.receiveErrs.Load(),
	}
}

// All yields every counter with its name, in the order of the struct.
func (c Counters) All() iter.Seq2[string, uint64] {
	return func(yield func(string, uint64) bool) {
		for _, e := range [...]struct {
			name string
			v    uint64
		}{
			{"sent_pkts", c.SentPkts}, {"rcvd_pkts", c.RcvdPkts},
			{"duplicate_request", c.DuplicateRequest}, {"out_of_seq_request", c.OutOfSeqRequest},
			{"rcvd_rnr_err", c.RcvdRNRErr}, {"send_rnr_err", c.SendRNRErr},
			{"rcvd_seq_err", c.RcvdSeqErr}, {"retry_exceeded_err", c.RetryExceededErr},
			{"retry_rnr_exceeded_err", c.RetryRNRExceededErr},
			{"completer_retry_err", c.CompleterRetryErr}, {"send_err", c.SendErr},
			{"link_downed", c.LinkDowned}, {"rdma_sends", c.RDMASends}, {"rdma_recvs", c.RDMARecvs},
			{"sent_bytes", c.SentBytes}, {"rcvd_bytes", c.RcvdBytes},
			{"sent_access_nak", c.SentAccessNAK}, {"sent_inv_req_nak", c.SentInvReqNAK},
			{"rcvd_malformed", c.RcvdMalformed}, {"rcvd_icrc_err", c.RcvdICRCErr},
			{"rcvd_bad_pkey", c.RcvdBadPKey}, {"rcvd_unknown_qpn", c.RcvdUnknownQPN},
			{"rcvd_no_mcast_group", c.RcvdNoMcastGroup}, {"rcvd_wrong_path", c.RcvdWrongPath},
			{"rcvd_wrong_state", c.RcvdWrongState}, {"rcvd_bad_opcode", c.RcvdBadOpcode},
			{"rcvd_bad_access", c.RcvdBadAccess}, {"rcvd_busy", c.RcvdBusy},
			{"qkey_violation", c.QKeyViolation}, {"rcvd_no_recv_wqe", c.RcvdNoRecvWQE},
			{"rcvd_too_long", c.RcvdTooLong}, {"rcvd_unexpected", c.RcvdUnexpected},
			{"rcvd_net_err", c.RcvdNetErr},
		} {
			if !yield(e.name, e.v) {
				return
			}
		}
	}
}
