//go:build gorxe_clib

// The posts: ibv_post_send, ibv_post_recv and ibv_post_srq_recv as the context's ops. A work
// request is checked here as gorxe's PostSend would check it, takes a slot of its queue (ring.c)
// and goes into the QP's post ring, which the engine takes from each time it runs (feed.go), as
// rxe's provider writes the rings the kernel reads. Only a post that finds the engine idle (the
// bell set) calls into Go, to start it. SRQ receives go into the SRQ's ring, which its QPs'
// engines take whenever a message needs a receive. The operations the ring does not carry (local
// invalidation, SEND with invalidate, memory windows, ...) cross into Go directly; the engine
// takes a QP's ring before such a post, so the order holds.

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>

#include "clib.h"
#include "_cgo_export.h"

// flatten_send resolves w's unions into f; an inline payload is gathered into inl, which has
// room for GX_MAX_INLINE bytes. It fails with EINVAL for a longer payload.
static int flatten_send(struct ibv_qp *qp, struct ibv_send_wr *w, struct gx_send_wr *f, uint8_t *inl) {
	memset(f, 0, sizeof(*f));
	if (w->send_flags & IBV_SEND_INLINE) {
		size_t n = 0;
		for (int i = 0; i < w->num_sge; i++) {
			if (w->sg_list[i].length > GX_MAX_INLINE - n)
				return EINVAL;
			memcpy(inl + n, (void *)(uintptr_t)w->sg_list[i].addr, w->sg_list[i].length);
			n += w->sg_list[i].length;
		}
		f->inline_data = inl;
		f->inline_len = (uint32_t)n;
	}
	f->wr_id = w->wr_id;
	f->sg_list = w->sg_list;
	f->num_sge = w->num_sge;
	f->opcode = w->opcode;
	f->send_flags = w->send_flags;
	switch (w->opcode) {
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		f->invalidate_rkey = w->invalidate_rkey;
		break;
	case IBV_WR_BIND_MW: {
		// without a region (a type 1 unbind) there is no lkey; without a window, no key, which
		// gorxe refuses
		const struct ibv_mw_bind_info *b = &w->bind_mw.bind_info;
		f->mw_rkey = w->bind_mw.mw ? w->bind_mw.mw->rkey : 0;
		f->rkey = w->bind_mw.rkey;
		f->mr_lkey = b->mr ? b->mr->lkey : 0;
		f->remote_addr = b->addr;
		f->mw_length = b->length;
		f->mw_access = b->mw_access_flags;
		return 0;
	}
	default:
		f->imm = be32toh(w->imm_data);
	}
	if (qp->qp_type == IBV_QPT_UD) {
		f->ah = w->wr.ud.ah;
		f->remote_qpn = w->wr.ud.remote_qpn;
		f->remote_qkey = w->wr.ud.remote_qkey;
		return 0;
	}
	switch (w->opcode) {
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		f->remote_addr = w->wr.atomic.remote_addr;
		f->compare_add = w->wr.atomic.compare_add;
		f->swap = w->wr.atomic.swap;
		f->rkey = w->wr.atomic.rkey;
		break;
	default:
		f->remote_addr = w->wr.rdma.remote_addr;
		f->rkey = w->wr.rdma.rkey;
	}
	return 0;
}

// send_stride is the bytes of one send ring entry: the request, its SGEs and its inline data.
static uint32_t send_stride(const struct ibv_qp_cap *cap) {
	size_t n = sizeof(struct gx_send_wr) + cap->max_send_sge * sizeof(struct ibv_sge) + cap->max_inline_data;
	return (uint32_t)((n + 7) & ~(size_t)7);
}

static uint32_t recv_stride(const struct ibv_qp_cap *cap) {
	return (uint32_t)(sizeof(struct gx_recv_ent) + cap->max_recv_sge * sizeof(struct ibv_sge));
}

static int ring_alloc(struct gx_post_ring *r, uint32_t n, uint32_t stride) {
	r->tail = 0;
	r->n = n;
	r->stride = stride;
	r->ents = n ? calloc(n, stride) : NULL;
	return n && !r->ents ? ENOMEM : 0;
}

int gx_post_rings_alloc(struct gx_qp_ex *q) {
	int rc = ring_alloc(&q->sring, q->sq.depth, send_stride(&q->cap));
	if (!rc)
		rc = ring_alloc(&q->rring, q->rq.depth, recv_stride(&q->cap));
	return rc;
}

void gx_post_rings_free(struct gx_qp_ex *q) {
	free(q->sring.ents);
	free(q->rring.ents);
	q->sring.ents = q->rring.ents = NULL;
}

static uint8_t *entry(struct gx_post_ring *r) { return r->ents + (size_t)(r->tail % r->n) * r->stride; }

// ring_recv writes w into r.
static void ring_recv(struct gx_post_ring *r, const struct ibv_recv_wr *w) {
	struct gx_recv_ent *e = (struct gx_recv_ent *)entry(r);
	e->wr_id = w->wr_id;
	e->num_sge = w->num_sge;
	memcpy(e + 1, w->sg_list, (size_t)w->num_sge * sizeof(struct ibv_sge));
	__atomic_store_n(&r->tail, r->tail + 1, __ATOMIC_SEQ_CST);
}

// kick starts an idle QP's engine.
static void kick(struct ibv_qp *qp) {
	gx_signals_onstack();
	gx_kick(qp);
}

// send_check applies gorxe's post-time checks to w, with the errno its direct path gives: 0 means
// w may go to the ring, -1 that it takes the direct path.
static int send_check(struct gx_qp_ex *q, const struct ibv_send_wr *w) {
	struct ibv_qp *qp = &q->ex.qp_base;
	if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT || qp->state == IBV_QPS_RTR)
		return -1; // refused by the direct path, unless qp->state is behind a move it missed
	int atomic = 0, may_inline = 1;
	switch (w->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		if (qp->qp_type == IBV_QPT_UD)
			return EINVAL;
		break;
	case IBV_WR_RDMA_READ:
		if (qp->qp_type != IBV_QPT_RC)
			return EINVAL;
		may_inline = 0;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (qp->qp_type != IBV_QPT_RC)
			return EINVAL;
		atomic = 1;
		may_inline = 0;
		break;
	case IBV_WR_BIND_MW:
		return w->bind_mw.mw ? -1 : EINVAL;
	default:
		return -1;
	}
	if (w->num_sge < 0)
		return EINVAL;
	uint64_t len = 0;
	for (int i = 0; i < w->num_sge; i++)
		len += w->sg_list[i].length;
	if (w->send_flags & IBV_SEND_INLINE) {
		if (!may_inline || len > q->cap.max_inline_data)
			return EINVAL;
	} else if ((uint32_t)w->num_sge > q->cap.max_send_sge) {
		return EINVAL;
	}
	if (len > 1ull << 31)
		return EINVAL;
	if (atomic && (len != 8 || (w->wr.atomic.remote_addr & 7)))
		return EINVAL;
	if (qp->qp_type == IBV_QPT_UD && (!w->wr.ud.ah || w->wr.ud.ah->pd != qp->pd ||
					   w->wr.ud.remote_qpn > 0xffffff || len > q->max_ud))
		return EINVAL;
	return 0;
}

// ring_send writes w, checked, into the send ring.
static void ring_send(struct gx_qp_ex *q, struct ibv_send_wr *w) {
	struct gx_post_ring *r = &q->sring;
	struct gx_send_wr *f = (struct gx_send_wr *)entry(r);
	struct ibv_sge *sg = (struct ibv_sge *)(f + 1);
	flatten_send(&q->ex.qp_base, w, f, (uint8_t *)(sg + q->cap.max_send_sge));
	if (!(w->send_flags & IBV_SEND_INLINE) && w->num_sge > 0)
		memcpy(sg, w->sg_list, (size_t)w->num_sge * sizeof(*sg));
	f->sg_list = sg; // the program's list is its own again once the post returns
	__atomic_store_n(&r->tail, r->tail + 1, __ATOMIC_SEQ_CST);
}

// direct_send posts w through Go at once.
static int direct_send(struct ibv_qp *qp, struct ibv_send_wr *w) {
	struct gx_send_wr f;
	uint8_t inl[GX_MAX_INLINE];
	int bad = 0, rc = flatten_send(qp, w, &f, inl);
	if (rc)
		return rc;
	gx_signals_onstack();
	return gx_post_send(qp, &f, 1, &bad);
}

int gx_post_send_op(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr) {
	struct gx_qp_ex *q = (struct gx_qp_ex *)qp;
	struct gx_wq *wq = &q->sq;
	if (gx_forked_child()) // before the lock, which a thread of the parent may have held
		return EOPNOTSUPP;
	int rc = 0, rang = 0;
	pthread_mutex_lock(&wq->mu);
	for (; wr; wr = wr->next) {
		int c = send_check(q, wr);
		if (c > 0) {
			rc = c;
			break;
		}
		if (!gx_wq_reserve(wq, 1)) {
			rc = ENOMEM;
			break;
		}
		if (c < 0 && (rc = direct_send(qp, wr)))
			break;
		if (c == 0) {
			ring_send(q, wr);
			rang = 1;
		}
		wq->posted++;
	}
	pthread_mutex_unlock(&wq->mu);
	// Set by the engine when it went idle: this poster starts it, and clears the bell so that
	// the posters after it need not (the engine sets it again when it goes idle again).
	if (rang && (__atomic_fetch_and(&q->bell, ~(uint32_t)GX_BELL_SEND, __ATOMIC_SEQ_CST) & GX_BELL_SEND))
		kick(qp);
	if (rc && bad_wr)
		*bad_wr = wr;
	return rc;
}

int gx_post_recv_op(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr) {
	struct gx_qp_ex *q = (struct gx_qp_ex *)qp;
	struct gx_wq *wq = &q->rq;
	if (gx_forked_child())
		return EOPNOTSUPP;
	int rc = 0, rang = 0;
	pthread_mutex_lock(&wq->mu);
	for (; wr; wr = wr->next) {
		// Receives go to the SRQ on a QP that has one, and nowhere in RESET, as rxe has it.
		if (qp->srq || wr->num_sge < 0 || (uint32_t)wr->num_sge > q->cap.max_recv_sge) {
			rc = EINVAL;
			break;
		}
		if (!gx_wq_reserve(wq, 1)) {
			rc = ENOMEM;
			break;
		}
		if (qp->state == IBV_QPS_RESET) {
			// refused by the direct path, unless qp->state is behind a move it missed
			int bad = 0;
			gx_signals_onstack();
			if ((rc = gx_post_recv(qp, 0, wr, 1, &bad)))
				break;
			wq->posted++;
			continue;
		}
		ring_recv(&q->rring, wr);
		wq->posted++;
		rang = 1;
	}
	pthread_mutex_unlock(&wq->mu);
	// A QP in the error state flushes receives at once: the engine must take them now.
	if (rang && (__atomic_load_n(&q->bell, __ATOMIC_SEQ_CST) & GX_BELL_RECV))
		kick(qp);
	if (rc && bad_wr)
		*bad_wr = wr;
	return rc;
}

int gx_srq_ring_alloc(struct gx_srq *g, uint32_t max_wr, uint32_t max_sge) {
	g->max_sge = max_sge;
	struct ibv_qp_cap cap = {.max_recv_sge = max_sge};
	return ring_alloc(&g->ring, max_wr, recv_stride(&cap));
}

void gx_srq_ring_free(struct gx_srq *g) {
	free(g->ring.ents);
	g->ring.ents = NULL;
}

// An SRQ needs no bell: its QPs' engines take the ring whenever a message needs a receive.
int gx_post_srq_recv_op(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr) {
	struct gx_srq *g = (struct gx_srq *)srq;
	struct gx_wq *wq = &g->wq;
	if (gx_forked_child())
		return EOPNOTSUPP;
	int rc = 0;
	pthread_mutex_lock(&wq->mu);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > g->max_sge) {
			rc = EINVAL;
			break;
		}
		if (!gx_wq_reserve(wq, 1)) {
			rc = ENOMEM;
			break;
		}
		if (g->ring.tail - __atomic_load_n(&g->fed, __ATOMIC_SEQ_CST) < g->ring.n) {
			ring_recv(&g->ring, wr);
		} else {
			int bad = 0;
			gx_signals_onstack();
			if ((rc = gx_post_recv(srq, 1, wr, 1, &bad)))
				break;
		}
		wq->posted++;
	}
	pthread_mutex_unlock(&wq->mu);
	if (rc && bad_wr)
		*bad_wr = wr;
	return rc;
}
