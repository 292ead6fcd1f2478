// Package qp implements queue pairs, shared receive queues and address handles: the verbs objects
// that hold work requests, their state machine and attribute rules, and the rings the transport
// engine consumes (ibv_qp, ibv_srq, ibv_ah).
//
// It is one of gorxe's engine packages. Programs embed gorxe through the root package,
// github.com/gorxe/gorxe, whose QP, SRQ and AH wrap this package's objects and whose aliases
// (QPAttr, SendWR, RecvWR, AHAttr, ...) name the types a program fills in.
//
// # Concurrency
//
// User goroutines post and modify while one transport worker per QP consumes the rings. Each queue
// has one mutex; the lock order is QP state, then send queue, then receive queue or SRQ, then CQ.
// Nothing here starts goroutines or reads clocks. Posting, popping and completing never allocate.
//
// # Send queue positions
//
// A send queue has three monotonically increasing positions: head (oldest WQE not yet completed,
// owned by the completer), cursor (next WQE the requester has not started) and tail (next free
// slot, owned by posters). Positions never go backwards, even across RESET, so a position names
// one WQE for the life of the QP and a stale one is detected (ErrStale).
//
// A slot is free for posting again only once the completion that retires its WQE has been polled
// from the CQ (cq.Freed counts those slots; an unsignaled WQE's slot frees with the next signaled
// completion of its queue, and flushing or resetting the queue frees what no completion will).
// That is the hardware rule behind max_send_wr and max_recv_wr, and the reason a CQ as deep as
// the queues completing into it never overruns; kernel rxe frees a slot when the completion is
// generated instead. Since a slot is reused only after the completer moved head past it, slots in
// [head, tail) are never written by posters, and the engine may keep pointers to started WQEs.
// Receive queues and SRQs free their slots on polling the same way.
//
// # Flushing
//
// Entering ERR completes every outstanding WQE with WCWRFlushErr, in order, before Modify
// returns: send WQEs into the send CQ whether or not they were signaled (as rxe does), receive WQEs
// into the receive CQ. A QP on an SRQ raises EventQPLastWQEReached instead of touching the shared
// queue. Work requests posted in ERR (and send requests posted in SQE) complete at once with
// WCWRFlushErr, behind any earlier ones.
package qp
