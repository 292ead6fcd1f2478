// Internal declarations shared by the C files of gorxe's libibverbs.so.1 and the Go side.
#ifndef GORXE_CLIB_H
#define GORXE_CLIB_H

#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <infiniband/verbs.h>

// A send work request with its unions resolved, as the Go side reads it: C knows the QP type and
// the opcode, so it picks the union member, and Go sees plain fields.
struct gx_send_wr {
	uint64_t wr_id;
	struct ibv_sge *sg_list;
	int num_sge;
	uint32_t opcode;
	uint32_t send_flags;
	uint32_t imm;             // the immediate value in host order (imm_data is big-endian)
	uint32_t invalidate_rkey; // SEND_WITH_INV, LOCAL_INV
	uint32_t rkey;            // RDMA, atomics; BIND_MW: the window's new rkey (bind_mw.rkey)
	uint64_t remote_addr;     // RDMA, atomics; BIND_MW: the window's first byte
	uint64_t compare_add;
	uint64_t swap;
	struct ibv_ah *ah;        // UD
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t inline_len;      // IBV_SEND_INLINE: the payload gathered from sg_list
	uint8_t *inline_data;
	uint32_t mw_rkey;         // BIND_MW: the window's current rkey
	uint32_t mr_lkey;         // BIND_MW: the lkey of the region bound to (0: none)
	uint32_t mw_access;       // BIND_MW: the rights the window grants
	uint64_t mw_length;       // BIND_MW: the window's length (0 unbinds a type 1 window)
};

// The most inline data one work request carries (the device's max_inline_data).
#define GX_MAX_INLINE 512

// A CQ's ring, which the engine writes and poll_cq reads without calling into Go: the layout of
// gorxe's CQRingHeader and CQRingEntry (cq.Ring gives the protocol), checked against them when the
// library is built (ring.go).
struct gx_ring_header {
	uint64_t tail; // completions written; loaded with acquire
	uint8_t pad0[56];
	uint64_t head; // completions polled; stored with release
	uint8_t pad1[56];
	uint32_t notify; // ibv_req_notify_cq's arm: GX_NOTIFY_NEXT or GX_NOTIFY_SOLICITED
	uint32_t overrun;
};

// The most entries a CQ has, rxe's max_cqe (gorxe's MaxCQE).
#define GX_MAX_CQE 32767

#define GX_NOTIFY_NEXT 1
#define GX_NOTIFY_SOLICITED 2

struct gx_ring_wc {
	uint64_t wr_id;
	uint8_t status;
	uint8_t opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm; // host order
	uint32_t invalidated_rkey;
	uint32_t qp_num;
	uint32_t src_qp;
	uint8_t wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
};

struct gx_ring_entry {
	struct gx_ring_wc wc;
	uint32_t slots;   // work-queue slots its poll frees
	uint32_t dropped; // poll_cq skips it (its QP was reset or destroyed); the engine writes 0
};

// A work queue's count of outstanding work requests, kept in C: a work request holds its slot
// from its post until its completion is polled (the rule gorxe's CQs keep, so that a CQ as deep as
// its queues never overruns), and only poll_cq sees the poll.
struct gx_wq {
	pthread_mutex_t mu; // serializes posters
	uint32_t depth;     // max_send_wr, max_recv_wr or the SRQ's max_wr
	uint64_t posted;    // under mu
	uint64_t freed;     // added to atomically by poll_cq
};

// Every CQ is allocated as a gx_cq, extended or not.
struct gx_cq {
	struct ibv_cq_ex ex; // first: the program's ibv_cq and ibv_cq_ex are this address
	struct ibv_wc cur;   // the completion the ibv_wc_read_* calls read
	pthread_mutex_t poll_mu; // serializes pollers and guards the fields below
	struct gx_ring_header *hdr;
	struct gx_ring_entry *ents;
	uint32_t n;
	struct gx_qp_ex *last; // the QP of the last completion polled, and its number
	uint32_t last_qpn;
	// Completion events ibv_get_cq_event returned for the CQ; ibv_destroy_cq waits until
	// ex.comp_events_completed (ibv_ack_cq_events) reaches it, as libibverbs does. Guarded by the
	// ibv_cq's mutex.
	uint32_t events_reported;
	struct gx_cq *chan_next; // the next CQ on the same completion channel (gx_comp_channel)
	// When a poll of the CQ last returned empty (CLOCK_MONOTONIC ns), and how many polls found it
	// empty: ring.c's gx_poll_cq. Pollers of one CQ update them with relaxed atomics; a lost update
	// costs at most one look.
	uint64_t empty_at;
	uint32_t empty_polls;
};

// gx_comp_channel is every completion channel the library hands out. The pipe's records name
// CQs by handle; ibv_get_cq_event finds the CQ among the channel's, skipping the records of CQs
// destroyed since they were written, as libibverbs drops a destroyed CQ's unread events.
struct gx_comp_channel {
	struct ibv_comp_channel ch; // first: the program's ibv_comp_channel is this address
	pthread_mutex_t mu;         // guards cqs
	struct gx_cq *cqs;
};


// How many work requests or completions cross into Go per call.
#define GX_BATCH 32

// Every QP is allocated as a gx_qp_ex, so that ibv_qp_to_qp_ex can tell an extended QP (made by
// ibv_create_qp_ex) from a plain one; the ibv_wr_* calls build work requests here between
// wr_start and wr_complete, which posts them.
// A QP's post ring: the work requests ibv_post_send or ibv_post_recv accepted, queued for the
// engine, which takes them each time it runs (gorxe's Feeder; feed.go), so a post to a QP whose
// engine runs anyway costs no call into Go. Entries are stride bytes: in a send ring a gx_send_wr
// followed by its SGEs and inline data (its pointers point there), in a receive ring a gx_recv_ent
// followed by its SGEs. A ring has as many entries as its queue is deep, and a post needs a slot
// of the queue (gx_wq), which comes back only once the work request completed, so an entry is
// never overwritten before the engine took it.
struct gx_post_ring {
	uint64_t tail; // entries written, stored (seq_cst) by posters under their queue's lock
	uint32_t n, stride;
	uint8_t *ents;
};

struct gx_recv_ent {
	uint64_t wr_id;
	int32_t num_sge;
	uint32_t reserved;
};

// Every SRQ is allocated as a gx_srq. Its post ring keeps the size the SRQ had when created while
// ibv_modify_srq may resize the queue, so posters also check how far the engine took the ring
// (fed, stored by it): a post that finds the ring full goes through Go, which takes the ring
// first, so the order holds.
struct gx_srq {
	struct ibv_srq srq; // first
	struct gx_wq wq;
	struct gx_post_ring ring;
	uint64_t fed;     // ring entries the engine took
	uint32_t max_sge; // per work request, as the SRQ was created
};

// What the engine asks of posters after each of its runs (gx_qp_ex.bell): a poster that finds
// its bit set calls gx_kick.
#define GX_BELL_SEND 1 // the engine is idle: nothing else will make it take a send
#define GX_BELL_RECV 2 // the QP is in the error state: a receive is to be flushed at once

struct gx_qp_ex {
	struct ibv_qp_ex ex; // first: the program's ibv_qp and ibv_qp_ex are this address
	struct gx_wq sq, rq; // rq is unused on an SRQ
	struct gx_post_ring sring, rring;
	uint32_t bell;
	uint32_t max_ud;  // the largest UD payload (the port's MTU)
	struct ibv_qp_cap cap;
	int extended;
	int err;                 // the first error since wr_start, reported by wr_complete
	int n, max_wr;           // work requests built, room for
	int max_sge, max_inline; // per work request
	struct ibv_send_wr *wrs;
	struct ibv_sge *sges;    // max_sge for each work request
	uint8_t *inl;            // max_inline bytes for each work request
};

// gx_create_qp_ex is the context's create_qp_ex; gx_free_qp_ex frees a QP's work request
// buffers.
struct ibv_qp *gx_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
void gx_free_qp_ex(struct gx_qp_ex *q);

// The data path in C (ring.c). gx_ring_alloc allocates a CQ ring of n entries, gx_ring_free
// frees one; gx_poll_cq and gx_req_notify_cq are the context's ops; gx_wq_init sets a queue up;
// gx_wq_reserve takes up to want slots of wq for a post (its lock held) and returns how many it
// got; gx_qp_added and gx_qp_removed keep the table that finds a completion's QP by number;
// gx_qp_reset, for a QP moved to RESET, and gx_qp_removed drop the QP's completions still in its
// CQs and count its queues afresh.
int gx_ring_alloc(uint32_t n, struct gx_ring_header **hdr, struct gx_ring_entry **ents);
void gx_ring_free(struct gx_ring_header *hdr, struct gx_ring_entry *ents);
int gx_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int gx_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void gx_wq_init(struct gx_wq *wq, uint32_t depth);
int gx_wq_reserve(struct gx_wq *wq, int want);
int gx_qp_added(struct gx_qp_ex *q);
void gx_qp_removed(struct gx_qp_ex *q);
void gx_qp_reset(struct gx_qp_ex *q);

// The context's post ops (post.c).
int gx_post_send_op(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int gx_post_recv_op(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int gx_post_srq_recv_op(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

// The context's memory window ops (mw.c).
struct ibv_mw *gx_alloc_mw_op(struct ibv_pd *pd, enum ibv_mw_type type);
int gx_dealloc_mw_op(struct ibv_mw *mw);
int gx_bind_mw_op(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);

// gx_post_rings_alloc sets up a QP's post rings for its capabilities (ENOMEM without memory);
// gx_post_rings_free frees them.
int gx_post_rings_alloc(struct gx_qp_ex *q);
void gx_post_rings_free(struct gx_qp_ex *q);

// gx_srq_ring_alloc sets up an SRQ's post ring for the queue as created (ENOMEM without memory);
// gx_srq_ring_free frees it.
int gx_srq_ring_alloc(struct gx_srq *g, uint32_t max_wr, uint32_t max_sge);
void gx_srq_ring_free(struct gx_srq *g);

// The name of the memfd behind each context's cmd_fd.
#define GX_CONTEXT_FILE "gorxe-context"

// gx_alloc_parent_domain is the context's alloc_parent_domain.
struct ibv_pd *gx_alloc_parent_domain(struct ibv_context *context, struct ibv_parent_domain_init_attr *attr);

// gx_wait_comp_event waits until the channel's pipe has an event, running what the device's
// sockets receive meanwhile, if the channel blocks (compwait.c).
void gx_wait_comp_event(struct ibv_comp_channel *ch);

// gx_forked_child reports, with a message and errno EOPNOTSUPP the first time, that this is a
// child of fork(), where the library's Go side cannot run.
int gx_forked_child(void);

// gx_is_forked_child is gx_forked_child without the message and errno.
int gx_is_forked_child(void);

// gx_note_live_qps records how many QPs the program has (created and not destroyed), so that the
// library's exit handler calls into Go only when one may hold an ACK back (exit.c).
void gx_note_live_qps(int n);

// gx_signals_onstack gives the program's signal handlers SA_ONSTACK before a call into Go, looking
// at most every 10 ms (signals.c says why).
void gx_signals_onstack(void);

// GX_CALL runs a call into Go that returns an errno, unless in a child of fork().
#define GX_CALL(call) (gx_forked_child() ? EOPNOTSUPP : (gx_signals_onstack(), (call)))

// gx_set_errno sets the calling thread's errno; Go calls it on the caller's thread.
void gx_set_errno(int e);

#endif
