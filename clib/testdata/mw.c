// A verbs program against the distribution's headers that uses memory windows between two RC QPs
// of one device: a type 1 window bound with ibv_bind_mw and unbound with a zero-length bind, a
// type 2 window bound by a BIND_MW work request and invalidated with LOCAL_INV, and one bound with
// ibv_wr_bind_mw and invalidated by the peer's SEND_WITH_INV. RDMA WRITEs through a window's rkey
// land in the region; one past the window's end, or after an unbind or invalidation, completes
// with IBV_WC_REM_ACCESS_ERR. It prints "ok" and exits 0, or names the failed check and exits 1.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "gxtest.h"

enum { SIZE = 4096, WIN_OFF = 256, WIN_LEN = 128 };

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;

// A connected pair: the writer a, and b, which owns the windows (an extended QP, so that it can
// bind with ibv_wr_bind_mw). Each has its own CQ. A remote access error breaks a pair, so each
// case that ends in one takes a new pair.
struct pair {
	struct ibv_cq *acq, *bcq;
	struct ibv_qp *a, *b;
};

static struct pair new_pair(void) {
	struct pair p;
	p.acq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	p.bcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(p.acq && p.bcq);
	struct ibv_qp_cap cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1};
	struct ibv_qp_init_attr ia = {.send_cq = p.acq, .recv_cq = p.acq, .qp_type = IBV_QPT_RC, .cap = cap};
	p.a = ibv_create_qp(pd, &ia);
	struct ibv_qp_init_attr_ex xia = {.send_cq = p.bcq, .recv_cq = p.bcq, .qp_type = IBV_QPT_RC, .pd = pd,
					  .cap = cap, .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
					  .send_ops_flags = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV};
	p.b = ibv_create_qp_ex(ctx, &xia);
	CHECK(p.a && p.b);
	connect_rc(p.a, p.b->qp_num, &gid, IBV_MTU_1024, IBV_ACCESS_REMOTE_WRITE);
	connect_rc(p.b, p.a->qp_num, &gid, IBV_MTU_1024, IBV_ACCESS_REMOTE_WRITE);
	return p;
}

static void free_pair(struct pair p) {
	CHECK(ibv_destroy_qp(p.a) == 0 && ibv_destroy_qp(p.b) == 0);
	CHECK(ibv_destroy_cq(p.acq) == 0 && ibv_destroy_cq(p.bcq) == 0);
}

static char *src, *dst; // a's source buffer and b's region
static struct ibv_mr *src_mr, *dst_mr;

// write_status writes n bytes of src, filled with fill, to dst + off through rkey, and returns the
// completion's status.
static enum ibv_wc_status write_status(struct pair p, uint32_t rkey, size_t off, uint32_t n, char fill) {
	memset(src, fill, n);
	struct ibv_sge sge = {.addr = (uintptr_t)src, .length = n, .lkey = src_mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 0x77, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	wr.wr.rdma.remote_addr = (uintptr_t)dst + off;
	wr.wr.rdma.rkey = rkey;
	CHECK(ibv_post_send(p.a, &wr, &bad) == 0);
	struct ibv_wc wc = wait_wc(p.acq);
	CHECK(wc.wr_id == 0x77);
	return wc.status;
}

// write_lands writes 16 bytes at dst + off through rkey and checks they arrived.
static void write_lands(struct pair p, uint32_t rkey, size_t off, char fill) {
	CHECK(write_status(p, rkey, off, 16, fill) == IBV_WC_SUCCESS);
	for (int i = 0; i < 16; i++)
		CHECK(dst[off + i] == fill);
}

// bind_done checks b's completion of a signaled bind.
static void bind_done(struct pair p, uint64_t wr_id) {
	struct ibv_wc wc = wait_wc(p.bcq);
	if (wc.status != IBV_WC_SUCCESS)
		fprintf(stderr, "bind %llu: %s\n", (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == wr_id);
}

int main(void) {
	ctx = open_only_device(&gid);
	pd = ibv_alloc_pd(ctx);
	src = calloc(1, SIZE);
	dst = calloc(1, SIZE);
	CHECK(pd && src && dst);
	src_mr = ibv_reg_mr(pd, src, SIZE, IBV_ACCESS_LOCAL_WRITE);
	dst_mr = ibv_reg_mr(pd, dst, SIZE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	CHECK(src_mr && dst_mr);
	struct ibv_mw_bind_info win = {.mr = dst_mr, .addr = (uintptr_t)dst + WIN_OFF, .length = WIN_LEN,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE};

	// Allocation: the object's fields, and EINVAL for a type that does not exist.
	errno = 0;
	CHECK(!ibv_alloc_mw(pd, (enum ibv_mw_type)3) && errno == EINVAL);
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	CHECK(mw1 && mw2);
	CHECK(mw1->type == IBV_MW_TYPE_1 && mw1->pd == pd && mw1->context == ctx && mw1->rkey);
	CHECK(mw2->type == IBV_MW_TYPE_2 && mw2->pd == pd && mw2->rkey != mw1->rkey && mw2->handle != mw1->handle);
	CHECK(ibv_dealloc_pd(pd) == EBUSY);

	// Type 1: ibv_bind_mw posts the bind and gives the window its next rkey at once.
	struct pair p = new_pair();
	struct ibv_mw_bind bind = {.wr_id = 1, .send_flags = IBV_SEND_SIGNALED, .bind_info = win};
	uint32_t old = mw1->rkey;
	CHECK(ibv_bind_mw(p.b, mw1, &bind) == 0);
	CHECK(mw1->rkey == ibv_inc_rkey(old));
	bind_done(p, 1);
	CHECK(ibv_dereg_mr(dst_mr) == EBUSY); // a bound window holds its region
	write_lands(p, mw1->rkey, WIN_OFF, 'a');
	write_lands(p, mw1->rkey, WIN_OFF + WIN_LEN - 16, 'b');
	CHECK(write_status(p, old, WIN_OFF, 16, 'x') == IBV_WC_REM_ACCESS_ERR); // the old rkey is gone
	free_pair(p);
	p = new_pair();
	CHECK(write_status(p, mw1->rkey, WIN_OFF + WIN_LEN - 8, 16, 'x') == IBV_WC_REM_ACCESS_ERR);
	CHECK(dst[WIN_OFF + WIN_LEN - 8] == 'b');
	free_pair(p);

	// A type 1 window is no QP's: a new pair writes through it, then unbinds it.
	p = new_pair();
	write_lands(p, mw1->rkey, WIN_OFF + 32, 'c');
	bind = (struct ibv_mw_bind){.wr_id = 2, .send_flags = IBV_SEND_SIGNALED};
	old = mw1->rkey;
	CHECK(ibv_bind_mw(p.b, mw1, &bind) == 0 && mw1->rkey == ibv_inc_rkey(old));
	bind_done(p, 2);
	CHECK(write_status(p, mw1->rkey, WIN_OFF, 16, 'x') == IBV_WC_REM_ACCESS_ERR);
	free_pair(p);

	// Binds the library refuses before posting: a type 2 window (through the context's op, which
	// ibv_bind_mw guards too) and a zero-based type 1 window.
	p = new_pair();
	bind = (struct ibv_mw_bind){.wr_id = 3, .bind_info = win};
	CHECK(ctx->ops.bind_mw(p.b, mw2, &bind) == EINVAL);
	CHECK(ibv_bind_mw(p.b, mw2, &bind) == EINVAL);
	bind.bind_info.mw_access_flags |= IBV_ACCESS_ZERO_BASED;
	old = mw1->rkey;
	CHECK(ibv_bind_mw(p.b, mw1, &bind) == EINVAL && mw1->rkey == old);
	struct ibv_send_wr wr = {.wr_id = 4, .opcode = IBV_WR_BIND_MW}, *bad = NULL;
	CHECK(ibv_post_send(p.b, &wr, &bad) == EINVAL && bad == &wr); // no window

	// Type 2: a BIND_MW work request with the program's new rkey. As on rxe and mlx5, the library
	// leaves mw->rkey alone and the program keeps it: a bind names the window by its current rkey.
	// LOCAL_INV frees the window.
	wr = (struct ibv_send_wr){.wr_id = 5, .opcode = IBV_WR_BIND_MW, .send_flags = IBV_SEND_SIGNALED};
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
	wr.bind_mw.bind_info = win;
	old = mw2->rkey;
	CHECK(ibv_post_send(p.b, &wr, &bad) == 0 && mw2->rkey == old);
	bind_done(p, 5);
	uint32_t key2 = mw2->rkey = wr.bind_mw.rkey;
	write_lands(p, key2, WIN_OFF + 48, 'd');
	CHECK(ibv_dereg_mr(dst_mr) == EBUSY);
	wr = (struct ibv_send_wr){.wr_id = 6, .opcode = IBV_WR_LOCAL_INV, .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = key2};
	CHECK(ibv_post_send(p.b, &wr, &bad) == 0);
	struct ibv_wc wc = wait_wc(p.bcq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV && wc.wr_id == 6);
	CHECK(write_status(p, key2, WIN_OFF + 48, 16, 'x') == IBV_WC_REM_ACCESS_ERR);
	CHECK(dst[WIN_OFF + 48] == 'd');
	free_pair(p);

	// Type 2 again, bound with ibv_wr_bind_mw and invalidated by a's SEND_WITH_INV, which b's
	// receive reports.
	p = new_pair();
	struct ibv_qp_ex *bx = ibv_qp_to_qp_ex(p.b);
	CHECK(bx);
	uint32_t key3 = ibv_inc_rkey(key2);
	ibv_wr_start(bx);
	bx->wr_id = 7;
	bx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(bx, mw2, key3, &win);
	CHECK(ibv_wr_complete(bx) == 0);
	bind_done(p, 7);
	mw2->rkey = key3;
	write_lands(p, key3, WIN_OFF, 'e');
	struct ibv_sge rsge = {.addr = (uintptr_t)dst, .length = 64, .lkey = dst_mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 8, .sg_list = &rsge, .num_sge = 1}, *rbad;
	CHECK(ibv_post_recv(p.b, &rwr, &rbad) == 0);
	wr = (struct ibv_send_wr){.wr_id = 9, .opcode = IBV_WR_SEND_WITH_INV, .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = key3};
	CHECK(ibv_post_send(p.a, &wr, &bad) == 0);
	wc = wait_wc(p.acq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 9);
	wc = wait_wc(p.bcq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 8);
	CHECK((wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == key3);
	CHECK(write_status(p, key3, WIN_OFF, 16, 'x') == IBV_WC_REM_ACCESS_ERR);
	free_pair(p);

	// Deallocation: a bound window is unbound, and its rkey is gone.
	p = new_pair();
	uint32_t key4 = ibv_inc_rkey(key3);
	ibv_wr_start(bx = ibv_qp_to_qp_ex(p.b));
	bx->wr_id = 10;
	bx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(bx, mw2, key4, &win);
	CHECK(ibv_wr_complete(bx) == 0);
	bind_done(p, 10);
	CHECK(ibv_dealloc_mw(mw2) == 0 && ibv_dealloc_mw(mw1) == 0);
	CHECK(write_status(p, key4, WIN_OFF, 16, 'x') == IBV_WC_REM_ACCESS_ERR);
	free_pair(p);

	CHECK(ibv_dereg_mr(dst_mr) == 0 && ibv_dereg_mr(src_mr) == 0);
	CHECK(ibv_dealloc_pd(pd) == 0);
	CHECK(ibv_close_device(ctx) == 0);
	printf("ok\n");
	return 0;
}
