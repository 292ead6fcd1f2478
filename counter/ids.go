package counter

// ID names one counter. IDs are dense from 0, so a Set is an array indexed by ID.
type ID uint8

// The counters. The comment of each is its help text in the table below; the table keeps the
// names rxe's hardware counters have (rdma statistic show), so numbers compare directly with a
// kernel peer's.
const (
	SentPkts ID = iota
	RcvdPkts
	DuplicateRequest
	OutOfSeqRequest
	RcvdRNRErr
	SendRNRErr
	RcvdSeqErr
	RetryExceededErr
	RetryRNRExceededErr
	CompleterRetryErr
	SendErr
	LinkDowned
	RDMASends
	RDMARecvs
	SentBytes
	RcvdBytes

	RcvdMalformed
	RcvdICRCErr
	RcvdBadPKey
	RcvdUnknownQPN
	RcvdNoMcastGroup
	RcvdWrongPath
	RcvdWrongState
	RcvdBadOpcode
	RcvdBadAccess
	RcvdBusy
	QKeyViolation
	RcvdNoRecvWQE
	RcvdTooLong
	RcvdUnexpected
	RcvdNetErr
	SentAccessNAK
	SentInvReqNAK
	LateTimeouts
	BusyTimeouts

	NetDropQueueFull
	NetDropNoRoute
	NetDropTruncated
	NetDropSendError

	NetGSOSends
	NetGSOSegments
	NetGROReads
	NetGROSegments
	NetGSOFallbacks
	NetGROFallbacks

	NetSendCalls
	NetRecvCalls
	NetRecvEmpty

	NetMcastJoins
	NetMcastLeaves

	// NumIDs is the number of counters, the length of a Set.
	NumIDs
)

// Desc describes one counter.
type Desc struct {
	Name string // rxe's hw_counter name where rxe has the counter, else gorxe's in its style
	Help string // one line for humans and metric exporters
}

var table = [NumIDs]Desc{
	SentPkts:            {"sent_pkts", "packets sent: requests, acknowledgements and responses"},
	RcvdPkts:            {"rcvd_pkts", "packets handed to a QP"},
	DuplicateRequest:    {"duplicate_request", "duplicate requests received"},
	OutOfSeqRequest:     {"out_of_seq_request", "requests received out of sequence"},
	RcvdRNRErr:          {"rcvd_rnr_err", "RNR NAKs received"},
	SendRNRErr:          {"send_rnr_err", "RNR NAKs sent"},
	RcvdSeqErr:          {"rcvd_seq_err", "PSN sequence error NAKs received"},
	RetryExceededErr:    {"retry_exceeded_err", "requests failed after retry_cnt retries"},
	RetryRNRExceededErr: {"retry_rnr_exceeded_err", "requests failed after rnr_retry RNR retries"},
	CompleterRetryErr:   {"completer_retry_err", "retransmissions started"},
	SendErr:             {"send_err", "packets the network refused or that could not be built"},
	LinkDowned:          {"link_downed", "times the port went down (never: it cannot)"},
	RDMASends:           {"rdma_sends", "SEND work requests retired"},
	RDMARecvs:           {"rdma_recvs", "successful receive completions"},
	SentBytes:           {"sent_bytes", "payload bytes sent"},
	RcvdBytes:           {"rcvd_bytes", "payload bytes received"},

	RcvdMalformed:    {"rcvd_malformed", "datagrams that are not valid RoCEv2 packets"},
	RcvdICRCErr:      {"rcvd_icrc_err", "packets with an ICRC mismatch"},
	RcvdBadPKey:      {"rcvd_bad_pkey", "packets with a P_Key not in the table (bad_pkey_cntr)"},
	RcvdUnknownQPN:   {"rcvd_unknown_qpn", "packets for no existing QP, QP0 included"},
	RcvdNoMcastGroup: {"rcvd_no_mcast_group", "multicast packets for a group no QP joined"},
	RcvdWrongPath:    {"rcvd_wrong_path", "RC/UC packets not from the QP's peer address"},
	RcvdWrongState:   {"rcvd_wrong_state", "packets for a QP in a state that does not take them"},
	RcvdBadOpcode:    {"rcvd_bad_opcode", "packets whose opcode is not valid for the QP or sequence"},
	RcvdBadAccess:    {"rcvd_bad_access", "UC RDMA WRITEs failing their R_Key, range or access check"},
	RcvdBusy:         {"rcvd_busy", "RC requests behind a long RDMA READ response still being sent"},
	QKeyViolation:    {"qkey_violation", "UD packets with a Q_Key mismatch (qkey_viol_cntr)"},
	RcvdNoRecvWQE:    {"rcvd_no_recv_wqe", "UC/UD messages with no receive posted"},
	RcvdTooLong:      {"rcvd_too_long", "UC/UD messages longer than the receive buffer"},
	RcvdUnexpected:   {"rcvd_unexpected", "ACKs or responses matching no request"},
	RcvdNetErr:       {"rcvd_net_err", "errors reading from the network"},
	SentAccessNAK:    {"sent_access_nak", "RC remote access error NAKs sent (no rxe counter)"},
	SentInvReqNAK:    {"sent_inv_req_nak", "RC invalid request NAKs sent (no rxe counter)"},
	LateTimeouts:     {"late_timeouts", "retransmit timer expiries noticed too late to count against retry_cnt (no rxe counter)"},
	BusyTimeouts:     {"busy_timeouts", "retransmit timer expiries not counted because the responder was still sending responses (no rxe counter)"},

	NetDropQueueFull: {"net_drop_queue_full", "datagrams the network dropped: receive queue full"},
	NetDropNoRoute:   {"net_drop_no_route", "datagrams the network dropped: no route to the destination"},
	NetDropTruncated: {"net_drop_truncated", "datagrams the network dropped: larger than the buffer"},
	NetDropSendError: {"net_drop_send_error", "datagrams the kernel refused to send"},

	// Segmentation offload of the UDP sockets: how well batching works, not errors.
	NetGSOSends:     {"net_gso_sends", "segmented sends: one buffer the kernel split into datagrams (UDP GSO)"},
	NetGSOSegments:  {"net_gso_segments", "datagrams sent inside segmented sends"},
	NetGROReads:     {"net_gro_reads", "coalesced reads: one buffer holding several datagrams (UDP GRO)"},
	NetGROSegments:  {"net_gro_segments", "datagrams received inside coalesced reads"},
	NetGSOFallbacks: {"net_gso_fallbacks", "sockets that stopped segmenting after the kernel refused a segmented send"},
	NetGROFallbacks: {"net_gro_fallbacks", "listening sockets that could not turn GRO on"},

	// System calls of the UDP sockets, to weigh against the messages they carried.
	NetSendCalls: {"net_send_calls", "sendmmsg system calls"},
	NetRecvCalls: {"net_recv_calls", "recvmmsg system calls, those that found nothing included"},
	NetRecvEmpty: {"net_recv_empty", "recvmmsg system calls that found no datagram"},

	// Multicast memberships of the network (IGMP/MLD on the UDP backend), one per group however
	// many QPs attach to it.
	NetMcastJoins:  {"net_mcast_joins", "multicast groups the network joined for attached QPs"},
	NetMcastLeaves: {"net_mcast_leaves", "multicast groups the network left after their last QP detached"},
}

// Name returns the counter's name, "" for an ID out of range.
func (id ID) Name() string { return id.Desc().Name }

// Desc returns the counter's name and help text.
func (id ID) Desc() Desc {
	if id >= NumIDs {
		return Desc{}
	}
	return table[id]
}

// String returns the name.
func (id ID) String() string { return id.Name() }

// ByName returns the ID of the counter called name.
func ByName(name string) (ID, bool) {
	for id := range NumIDs {
		if table[id].Name == name {
			return id, true
		}
	}
	return 0, false
}
