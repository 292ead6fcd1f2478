//go:build gorxe_clib

// Extended QPs: ibv_create_qp_ex and the ibv_wr_* calls. The calls between ibv_wr_start and
// ibv_wr_complete build ordinary send work requests in the QP's buffers, and ibv_wr_complete
// posts them through the context's post_send, so they take the path ibv_post_send takes.

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clib.h"

// The operations an extended QP offers; creating one that asks for others (TSO, XRC, atomic
// writes) fails with EOPNOTSUPP.
#define SUPPORTED_OPS                                                                                   \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |         \
	 IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW |      \
	 IBV_QP_EX_WITH_SEND_WITH_INV)

static struct gx_qp_ex *of(struct ibv_qp_ex *qp) { return (struct gx_qp_ex *)qp; }

static void fail(struct gx_qp_ex *q, int err) {
	if (!q->err)
		q->err = err;
}

// next starts a work request of opcode with the QP's wr_id and wr_flags.
static struct ibv_send_wr *next(struct ibv_qp_ex *qp, enum ibv_wr_opcode opcode) {
	struct gx_qp_ex *q = of(qp);
	if (q->err)
		return NULL;
	if (q->n == q->max_wr) {
		fail(q, ENOMEM);
		return NULL;
	}
	struct ibv_send_wr *w = &q->wrs[q->n];
	memset(w, 0, sizeof(*w));
	w->wr_id = qp->wr_id;
	w->send_flags = qp->wr_flags;
	w->opcode = opcode;
	w->sg_list = &q->sges[q->n * q->max_sge];
	q->n++;
	return w;
}

// current is the work request the setters fill in: the last one started.
static struct ibv_send_wr *current(struct ibv_qp_ex *qp) {
	struct gx_qp_ex *q = of(qp);
	if (q->err)
		return NULL;
	if (q->n == 0) {
		fail(q, EINVAL);
		return NULL;
	}
	return &q->wrs[q->n - 1];
}

static void wr_send(struct ibv_qp_ex *qp) { next(qp, IBV_WR_SEND); }

static void wr_send_imm(struct ibv_qp_ex *qp, __be32 imm) {
	struct ibv_send_wr *w = next(qp, IBV_WR_SEND_WITH_IMM);
	if (w)
		w->imm_data = imm;
}

static void wr_send_inv(struct ibv_qp_ex *qp, uint32_t rkey) {
	struct ibv_send_wr *w = next(qp, IBV_WR_SEND_WITH_INV);
	if (w)
		w->invalidate_rkey = rkey;
}

static void wr_local_inv(struct ibv_qp_ex *qp, uint32_t rkey) {
	struct ibv_send_wr *w = next(qp, IBV_WR_LOCAL_INV);
	if (w)
		w->invalidate_rkey = rkey;
}

// wr_bind_mw binds mw (of either type) with the new key rkey, which the program chose (usually
// ibv_inc_rkey of mw->rkey) and keeps: mw->rkey is left as it is, as with ibv_post_send.
static void wr_bind_mw(struct ibv_qp_ex *qp, struct ibv_mw *mw, uint32_t rkey, const struct ibv_mw_bind_info *info) {
	struct ibv_send_wr *w = next(qp, IBV_WR_BIND_MW);
	if (w && !info) {
		fail(of(qp), EINVAL);
	} else if (w) {
		w->bind_mw.mw = mw;
		w->bind_mw.rkey = rkey;
		w->bind_mw.bind_info = *info;
	}
}

static void rdma(struct ibv_qp_ex *qp, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr, __be32 imm) {
	struct ibv_send_wr *w = next(qp, op);
	if (w) {
		w->wr.rdma.rkey = rkey;
		w->wr.rdma.remote_addr = addr;
		w->imm_data = imm;
	}
}

static void wr_rdma_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t addr) {
	rdma(qp, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t addr, __be32 imm) {
	rdma(qp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t addr) {
	rdma(qp, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void atomic(struct ibv_qp_ex *qp, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr, uint64_t compare_add,
		   uint64_t swap) {
	struct ibv_send_wr *w = next(qp, op);
	if (w) {
		w->wr.atomic.rkey = rkey;
		w->wr.atomic.remote_addr = addr;
		w->wr.atomic.compare_add = compare_add;
		w->wr.atomic.swap = swap;
	}
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap) {
	atomic(qp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t addr, uint64_t add) {
	atomic(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void wr_set_ud_addr(struct ibv_qp_ex *qp, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey) {
	struct ibv_send_wr *w = current(qp);
	if (w) {
		w->wr.ud.ah = ah;
		w->wr.ud.remote_qpn = remote_qpn;
		w->wr.ud.remote_qkey = remote_qkey;
	}
}

static void wr_set_sge_list(struct ibv_qp_ex *qp, size_t num_sge, const struct ibv_sge *sg_list) {
	struct ibv_send_wr *w = current(qp);
	if (!w)
		return;
	if (num_sge > (size_t)of(qp)->max_sge) {
		fail(of(qp), EINVAL);
		return;
	}
	memcpy(w->sg_list, sg_list, num_sge * sizeof(*sg_list));
	w->num_sge = (int)num_sge;
}

static void wr_set_sge(struct ibv_qp_ex *qp, uint32_t lkey, uint64_t addr, uint32_t length) {
	struct ibv_sge sge = {.addr = addr, .length = length, .lkey = lkey};
	wr_set_sge_list(qp, 1, &sge);
}

// The inline payload is copied at once into the work request's own buffer, so the program may
// reuse its buffers before ibv_wr_complete.
static void wr_set_inline_data_list(struct ibv_qp_ex *qp, size_t num_buf, const struct ibv_data_buf *buf_list) {
	struct gx_qp_ex *q = of(qp);
	struct ibv_send_wr *w = current(qp);
	if (!w)
		return;
	uint8_t *dst = q->inl + (size_t)(w - q->wrs) * (size_t)q->max_inline;
	size_t n = 0;
	for (size_t i = 0; i < num_buf; i++) {
		if (buf_list[i].length > (size_t)q->max_inline - n) {
			fail(q, EINVAL);
			return;
		}
		memcpy(dst + n, buf_list[i].addr, buf_list[i].length);
		n += buf_list[i].length;
	}
	w->sg_list[0] = (struct ibv_sge){.addr = (uintptr_t)dst, .length = (uint32_t)n};
	w->num_sge = 1;
	w->send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *qp, void *addr, size_t length) {
	struct ibv_data_buf b = {.addr = addr, .length = length};
	wr_set_inline_data_list(qp, 1, &b);
}

static void wr_start(struct ibv_qp_ex *qp) {
	of(qp)->n = 0;
	of(qp)->err = 0;
}

static void wr_abort(struct ibv_qp_ex *qp) { wr_start(qp); }

static int wr_complete(struct ibv_qp_ex *qp) {
	struct gx_qp_ex *q = of(qp);
	int rc = q->err, n = q->n;
	q->n = 0;
	q->err = 0;
	if (rc || n == 0)
		return rc;
	for (int i = 0; i < n; i++)
		q->wrs[i].next = i + 1 < n ? &q->wrs[i + 1] : NULL;
	struct ibv_send_wr *bad;
	struct ibv_qp *base = &qp->qp_base;
	return base->context->ops.post_send(base, q->wrs, &bad);
}

struct ibv_qp *gx_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *a) {
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	errno = 0;
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd) {
		errno = EINVAL;
		return NULL;
	}
	uint64_t ops = (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ? a->send_ops_flags : 0;
	if ((a->comp_mask & ~known) || ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags) ||
	    (ops & ~(uint64_t)SUPPORTED_OPS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	struct ibv_qp_init_attr ia = {.qp_context = a->qp_context, .send_cq = a->send_cq, .recv_cq = a->recv_cq,
				      .srq = a->srq, .cap = a->cap, .qp_type = a->qp_type, .sq_sig_all = a->sq_sig_all};
	struct ibv_qp *qp = ibv_create_qp(a->pd, &ia);
	if (!qp)
		return NULL;
	a->cap = ia.cap;
	struct gx_qp_ex *q = (struct gx_qp_ex *)qp;
	q->max_wr = ia.cap.max_send_wr > 0 ? (int)ia.cap.max_send_wr : 1;
	q->max_sge = ia.cap.max_send_sge > 0 ? (int)ia.cap.max_send_sge : 1;
	q->max_inline = (int)ia.cap.max_inline_data;
	q->wrs = calloc((size_t)q->max_wr, sizeof(*q->wrs));
	q->sges = calloc((size_t)q->max_wr * (size_t)q->max_sge, sizeof(*q->sges));
	q->inl = calloc((size_t)q->max_wr, (size_t)q->max_inline + 1);
	if (!q->wrs || !q->sges || !q->inl) {
		ibv_destroy_qp(qp);
		errno = ENOMEM;
		return NULL;
	}
	struct ibv_qp_ex *x = &q->ex;
	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	q->extended = 1;
	return qp;
}

void gx_free_qp_ex(struct gx_qp_ex *q) {
	free(q->wrs);
	free(q->sges);
	free(q->inl);
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp) {
	struct gx_qp_ex *q = (struct gx_qp_ex *)qp;
	return q && q->extended ? &q->ex : NULL;
}
