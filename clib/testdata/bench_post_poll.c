// A micro-benchmark of the library's data path as a C program sees it: two RC QPs of one device,
// connected to each other, and N iterations of ibv_post_send (a signaled 64-byte RDMA WRITE)
// followed by a busy ibv_poll_cq until its completion. Each iteration is one post, the WRITE and
// its acknowledgement through the device's socket, and the polls that find the completion.
//
// Usage: bench_post_poll N. It prints "iterations N ns/op X ops/s Y" for the timed loop, which
// follows a warm-up (the first calls on a thread, the first packets), and exits 0; or names the
// failed check and exits 1.

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "gxtest.h"

enum { SIZE = 64, WARMUP = 1000 };

// write_and_wait posts one signaled WRITE and busy-polls cq until its completion.
static void write_and_wait(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_send_wr *wr) {
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int n;
	CHECK(ibv_post_send(qp, wr, &bad) == 0);
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		;
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == wr->wr_id);
	wr->wr_id++;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	long iters = strtol(argv[1], NULL, 10);
	CHECK(iters > 0);

	struct ibv_device **list = ibv_get_device_list(NULL);
	CHECK(list && list[0]);
	struct ibv_context *ctx = ibv_open_device(list[0]);
	CHECK(ctx);
	union ibv_gid gid;
	CHECK(ibv_query_gid(ctx, 1, GID_INDEX, &gid) == 0);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	char *buf = calloc(2, SIZE);
	CHECK(buf);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 2 * SIZE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq *peer_cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq && peer_cq);
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 8, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *a = ibv_create_qp(pd, &ia);
	ia.send_cq = ia.recv_cq = peer_cq;
	struct ibv_qp *b = ibv_create_qp(pd, &ia);
	CHECK(a && b);
	connect_rc(a, b->qp_num, &gid, IBV_MTU_4096, IBV_ACCESS_REMOTE_WRITE);
	connect_rc(b, a->qp_num, &gid, IBV_MTU_4096, IBV_ACCESS_REMOTE_WRITE);

	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = SIZE, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.rdma = {.remote_addr = (uintptr_t)buf + SIZE, .rkey = mr->rkey}};
	for (int i = 0; i < WARMUP; i++)
		write_and_wait(a, cq, &wr);

	struct timespec t0, t1;
	CHECK(clock_gettime(CLOCK_MONOTONIC, &t0) == 0);
	for (long i = 0; i < iters; i++)
		write_and_wait(a, cq, &wr);
	CHECK(clock_gettime(CLOCK_MONOTONIC, &t1) == 0);
	double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	printf("iterations %ld ns/op %.1f ops/s %.0f\n", iters, ns / (double)iters, (double)iters * 1e9 / ns);

	CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0);
	CHECK(ibv_destroy_cq(cq) == 0 && ibv_destroy_cq(peer_cq) == 0);
	CHECK(ibv_dereg_mr(mr) == 0 && ibv_dealloc_pd(pd) == 0 && ibv_close_device(ctx) == 0);
	ibv_free_device_list(list);
	free(buf);
	return 0;
}
