//go:build gorxe_clib

// The completion side of the data path, in C: the engine writes each completion into its CQ's
// ring (gorxe's CreateCQOnRing) and poll_cq reads it from there, as rxe's provider reads the ring
// the kernel fills, calling into Go only when the ring is empty, to run what the network holds on
// the program's thread; ibv_req_notify_cq stores the ring's arm, which the engine reads when it
// writes a completion. Because the engine cannot see a poll, the slots
// rule (a work request holds its queue slot until its completion is polled) is kept here: each
// queue counts its posts, and poll_cq gives back the slots each completion carries to the queue
// of the QP it names, found by number.

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <endian.h>

#include "clib.h"
#include "_cgo_export.h"

int gx_ring_alloc(uint32_t n, struct gx_ring_header **hdr, struct gx_ring_entry **ents) {
	*hdr = aligned_alloc(64, (sizeof(**hdr) + 63) / 64 * 64);
	*ents = calloc(n, sizeof(**ents));
	if (!*hdr || !*ents) {
		gx_ring_free(*hdr, *ents);
		return ENOMEM;
	}
	memset(*hdr, 0, sizeof(**hdr));
	return 0;
}

void gx_ring_free(struct gx_ring_header *hdr, struct gx_ring_entry *ents) {
	free(hdr);
	free(ents);
}

void gx_wq_init(struct gx_wq *wq, uint32_t depth) {
	pthread_mutex_init(&wq->mu, NULL);
	wq->depth = depth;
	wq->posted = 0;
	wq->freed = 0;
}

int gx_wq_reserve(struct gx_wq *wq, int want) {
	int64_t out = (int64_t)(wq->posted - __atomic_load_n(&wq->freed, __ATOMIC_ACQUIRE));
	if (out < 0)
		out = 0; // completions of work a reset discarded, polled after it
	int64_t room = (int64_t)wq->depth - out;
	if (room <= 0)
		return 0;
	return want < room ? want : (int)room;
}

// The QPs by device and number (each device numbers its QPs from the same start), in a hash
// table under qpn_mu, read on a poller's miss path only (each CQ remembers the last QP it
// credited). A QP leaves the table before it is freed, and gx_qp_removed then waits out the
// pollers of its CQs, so a poller never holds a freed QP.
struct qpn_node {
	struct gx_qp_ex *q;
	struct qpn_node *next;
};

#define QPN_BUCKETS 1024
static struct qpn_node *qpn_table[QPN_BUCKETS];
static pthread_mutex_t qpn_mu = PTHREAD_MUTEX_INITIALIZER;

static struct gx_qp_ex *qp_by_num(struct ibv_device *dev, uint32_t qpn) {
	struct gx_qp_ex *q = NULL;
	pthread_mutex_lock(&qpn_mu);
	for (struct qpn_node *n = qpn_table[qpn % QPN_BUCKETS]; n; n = n->next)
		if (n->q->ex.qp_base.qp_num == qpn && n->q->ex.qp_base.context->device == dev) {
			q = n->q;
			break;
		}
	pthread_mutex_unlock(&qpn_mu);
	return q;
}

int gx_qp_added(struct gx_qp_ex *q) {
	struct qpn_node *n = malloc(sizeof(*n));
	if (!n)
		return ENOMEM;
	n->q = q;
	pthread_mutex_lock(&qpn_mu);
	struct qpn_node **b = &qpn_table[q->ex.qp_base.qp_num % QPN_BUCKETS];
	n->next = *b;
	*b = n;
	pthread_mutex_unlock(&qpn_mu);
	return 0;
}

static void forget_qpn(struct gx_qp_ex *q) {
	pthread_mutex_lock(&qpn_mu);
	for (struct qpn_node **p = &qpn_table[q->ex.qp_base.qp_num % QPN_BUCKETS]; *p; p = &(*p)->next)
		if ((*p)->q == q) {
			struct qpn_node *n = *p;
			*p = n->next;
			free(n);
			break;
		}
	pthread_mutex_unlock(&qpn_mu);
}

static struct gx_cq *gcq(struct ibv_cq *cq) { return (struct gx_cq *)cq; }

static struct gx_wq *recv_wq(struct gx_qp_ex *q) {
	struct ibv_srq *srq = q->ex.qp_base.srq;
	return srq ? &((struct gx_srq *)srq)->wq : &q->rq;
}

// drop removes q's completions still queued in c, which poll_cq then skips, as mlx5's provider
// cleans a QP's completions from its CQs when the QP is reset or destroyed: they belong to work
// the reset discarded. Their slots go back to the QP's SRQ, the one queue that outlives the QP; a
// QP that reuses the number gets none of them.
static void drop(struct gx_cq *c, struct gx_qp_ex *q) {
	uint32_t qpn = q->ex.qp_base.qp_num;
	pthread_mutex_lock(&c->poll_mu);
	for (uint64_t i = c->hdr->head, tail = __atomic_load_n(&c->hdr->tail, __ATOMIC_ACQUIRE); i < tail; i++) {
		struct gx_ring_entry *e = &c->ents[i % c->n];
		if (e->wc.qp_num != qpn || e->dropped)
			continue;
		if ((e->wc.opcode & IBV_WC_RECV) && q->ex.qp_base.srq)
			__atomic_add_fetch(&recv_wq(q)->freed, e->slots, __ATOMIC_RELEASE);
		e->dropped = 1;
	}
	if (c->last == q)
		c->last = NULL;
	pthread_mutex_unlock(&c->poll_mu);
}

static void drop_from_cqs(struct gx_qp_ex *q) {
	struct ibv_qp *qp = &q->ex.qp_base;
	drop(gcq(qp->send_cq), q);
	if (qp->recv_cq != qp->send_cq)
		drop(gcq(qp->recv_cq), q);
}

void gx_qp_removed(struct gx_qp_ex *q) {
	forget_qpn(q);
	drop_from_cqs(q);
}

// gx_qp_reset: the reset discarded the QP's outstanding work, whose completions are dropped, so
// each of its queues starts empty.
void gx_qp_reset(struct gx_qp_ex *q) {
	drop_from_cqs(q);
	struct gx_wq *wqs[] = {&q->sq, &q->rq};
	for (int i = 0; i < 2; i++) {
		pthread_mutex_lock(&wqs[i]->mu);
		wqs[i]->posted = __atomic_load_n(&wqs[i]->freed, __ATOMIC_ACQUIRE);
		pthread_mutex_unlock(&wqs[i]->mu);
	}
}

// credit gives back the slots of a polled completion to its queue.
static void credit(struct gx_cq *c, const struct gx_ring_entry *e) {
	if (!e->slots)
		return;
	if (!c->last || c->last_qpn != e->wc.qp_num) {
		c->last = qp_by_num(c->ex.context->device, e->wc.qp_num);
		c->last_qpn = e->wc.qp_num;
		if (!c->last)
			return;
	}
	struct gx_wq *wq = (e->wc.opcode & IBV_WC_RECV) ? recv_wq(c->last) : &c->last->sq;
	__atomic_add_fetch(&wq->freed, e->slots, __ATOMIC_RELEASE);
}

static void to_wc(const struct gx_ring_wc *f, struct ibv_wc *w) {
	w->wr_id = f->wr_id;
	w->status = f->status;
	w->opcode = f->opcode;
	w->vendor_err = f->vendor_err;
	w->byte_len = f->byte_len;
	if (f->wc_flags & IBV_WC_WITH_INV)
		w->invalidated_rkey = f->invalidated_rkey;
	else
		w->imm_data = htobe32(f->imm);
	w->qp_num = f->qp_num;
	w->src_qp = f->src_qp;
	w->wc_flags = f->wc_flags;
	w->pkey_index = f->pkey_index;
	w->slid = f->slid;
	w->sl = f->sl;
	w->dlid_path_bits = f->dlid_path_bits;
}

// poll_ring moves up to num_entries completions from the ring into wc. An empty ring, what a
// busy poller finds nearly every time, is seen without the pollers' lock: 0 is a true answer
// even if another poller takes the entries written meanwhile.
static int poll_ring(struct gx_cq *c, int num_entries, struct ibv_wc *wc) {
	struct gx_ring_header *h = c->hdr;
	if (__atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) == __atomic_load_n(&h->head, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&h->overrun, __ATOMIC_RELAXED))
		return 0;
	pthread_mutex_lock(&c->poll_mu);
	uint64_t head = h->head;
	uint64_t avail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) - head;
	int n = 0;
	uint64_t taken = 0;
	uint32_t at = (uint32_t)(head % c->n);
	for (; taken < avail && n < num_entries; taken++) {
		const struct gx_ring_entry *e = &c->ents[at];
		if (++at == c->n)
			at = 0;
		if (e->dropped)
			continue;
		to_wc(&e->wc, &wc[n++]);
		credit(c, e);
	}
	__atomic_store_n(&h->head, head + taken, __ATOMIC_RELEASE);
	int overrun = n == 0 && __atomic_load_n(&h->overrun, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->poll_mu);
	return overrun ? -EINVAL : n;
}

// A poll that finds the ring empty runs the network in a call into Go (gx_poll_network). A
// program that polls the same CQ again at once, doing next to nothing in between, as a busy-poll
// loop does (perftest's, and rdma-core's pingpongs'), is served by one call that goes on looking
// for a while (clib's pollSpin) rather than by one call per look: a call costs the runtime's
// entry and exit, a third of an empty poll's time, and each one lengthens the loop that finds a
// datagram. TIGHT_NS is the longest gap from an empty return to the next poll of the CQ that
// counts as polling again at once; a program that does more between its polls keeps one look
// per call, so that its own work is never held up by a look it did not ask for.
#define TIGHT_NS 500

// Only every YIELD_CHECK_EVERY-th empty poll of a CQ that does not spin asks whether the thread
// is due to give the runtime's processor away (gx_poll_network's may_yield), which takes a clock
// reading, a tenth of an empty poll's time; at a microsecond or more per empty poll that delays
// the give-away by microseconds against its millisecond. A spin asks at its end.
#define YIELD_CHECK_EVERY 8

static uint64_t now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

// gx_poll_cq reads the ring; when it is empty, it runs what the network holds and what the
// engine has due on the program's thread, as rxe's kernel side runs on the CPU a packet arrives
// on, and reads the ring again.
int gx_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc) {
	if (gx_forked_child()) // the ring is the parent's, and its lock may be held there
		return -EOPNOTSUPP;
	if (num_entries <= 0)
		return 0;
	struct gx_cq *c = gcq(cq);
	int n = poll_ring(c, num_entries, wc);
	if (n != 0)
		return n;
	gx_signals_onstack();
	bool spin = now_ns() - __atomic_load_n(&c->empty_at, __ATOMIC_RELAXED) < TIGHT_NS;
	uint32_t empty = __atomic_load_n(&c->empty_polls, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&c->empty_polls, empty, __ATOMIC_RELAXED);
	if (gx_poll_network(cq, c->hdr, spin || empty % YIELD_CHECK_EVERY == 0, spin))
		n = poll_ring(c, num_entries, wc);
	if (n == 0)
		__atomic_store_n(&c->empty_at, now_ns(), __ATOMIC_RELAXED);
	return n;
}

int gx_req_notify_cq(struct ibv_cq *cq, int solicited_only) {
	if (gx_forked_child())
		return EOPNOTSUPP;
	uint32_t *arm = &gcq(cq)->hdr->notify;
	if (!solicited_only) {
		__atomic_store_n(arm, GX_NOTIFY_NEXT, __ATOMIC_SEQ_CST);
		return 0;
	}
	uint32_t none = 0;
	__atomic_compare_exchange_n(arm, &none, GX_NOTIFY_SOLICITED, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return 0;
}
