// Package cm is gorxe's sans-I/O InfiniBand communication manager (IBTA
// volume 1, chapter 12): the per-connection state machine that RDMA-CM
// programs (rping, perftest -R, every librdmacm client) drive over QP1.
//
// # Shape
//
// A [Manager] owns the connections and listeners of one port. Nothing in
// this package starts goroutines, opens sockets or reads a clock: every entry
// point takes the current time and appends what must happen to an [Output]:
// the MADs to send (each addressed to a peer's QP1) and the events for the
// consumer. [Manager.Deadline] reports when [Manager.Tick] must run next
// (retransmissions, timewait expiry). The caller serialises all calls.
//
// # Connection states
//
// The states and their names are IBTA's, as the kernel's ib_cm spells them:
//
//	active side                                passive side
//	-----------                                ------------
//	Idle --Connect/REQ--> REQSent              (listener) --REQ--> REQRcvd
//	REQSent --MRA--> MRAREQRcvd                REQRcvd --dup REQ/MRA--> MRAREQSent
//	REQSent|MRAREQRcvd --REP--> REPRcvd        REQRcvd|MRAREQSent --Accept/REP--> REPSent
//	REPRcvd --dup REP/MRA--> MRAREPSent        REPSent --MRA--> MRAREPRcvd
//	REPRcvd|MRAREPSent --SendRTU/RTU--> Established <--RTU (or first packet)-- REPSent|MRAREPRcvd
//
//	Established --Disconnect/DREQ--> DREQSent --DREP (or retries spent)--> Timewait
//	Established --DREQ--> DREQRcvd --Disconnect/DREP--> Timewait
//	DREQSent --DREQ (simultaneous disconnect)/DREP--> Timewait
//	Timewait --timer--> (gone)
//
// A REJ, or running out of retries for a REQ or a REP, returns a connection
// to Idle (it is forgotten) or, once the connection may have carried traffic,
// sends it to Timewait. A consumer with no room for a request drops it in
// REQRcvd ([Manager.DropREQ]): it is forgotten without a reply, and the
// peer's retransmission of the REQ arrives as a new request. SIDR (service
// ID resolution for UD) has its own two states, SIDRREQSent and SIDRREQRcvd.
//
// # Reliability
//
// CM MADs are unreliable datagrams. The sender of a REQ, REP, DREQ or
// SIDR_REQ retransmits it verbatim (same TID, same bytes, as kernel rxe does)
// every response timeout (4.096 µs × 2^n, plus two packet lifetimes) up to the
// "Max CM Retries" of the REQ. A receiver answers a duplicate by re-sending
// its stored reply (REP, RTU, DREP, SIDR_REP) or, while the consumer is still
// deciding, an MRA that stops the peer's retransmissions.
//
// # QP attributes
//
// The CM negotiates but does not touch QPs: [QPAttrs] holds the values the
// consumer applies to move its QP through INIT, RTR and RTS, the way
// librdmacm's rdma_init_qp_attr does.
package cm
