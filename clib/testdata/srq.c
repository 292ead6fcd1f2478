// A verbs program against the distribution's headers that receives through an SRQ: posts past
// the queue's depth (ENOMEM), with too many SGEs (EINVAL), both naming the request in bad_wr;
// posts after ibv_modify_srq grew the queue beyond the depth it was created with; SENDs from an
// RC peer land in the SRQ's buffers in the order they were posted, across many rounds; and the
// armed limit raises IBV_EVENT_SRQ_LIMIT_REACHED on async_fd once. It prints "ok" and exits 0, or
// names the failed check and exits 1.

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "gxtest.h"

enum { DEPTH = 4, GROWN = 12, MSG = 16, ROUNDS = 20 };

static struct ibv_srq *srq;
static struct ibv_mr *mr;
static char *buf; // GROWN receive slots, then the sender's slot

// post_range posts receives first..last-1 one call at a time, each into slot id % GROWN.
static void post_range(uint64_t first, uint64_t last) {
	for (uint64_t id = first; id < last; id++) {
		struct ibv_sge sge = {.addr = (uintptr_t)buf + (id % GROWN) * MSG, .length = MSG, .lkey = mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &sge, .num_sge = 1}, *bad = NULL;
		CHECK(ibv_post_srq_recv(srq, &wr, &bad) == 0);
	}
}

// send_n sends n messages numbered from first, each "msg <number>", and checks they completed.
static void send_n(struct ibv_qp *a, struct ibv_cq *acq, uint64_t first, int n) {
	char *out = buf + GROWN * MSG;
	for (int i = 0; i < n; i++) {
		snprintf(out, MSG, "msg %llu", (unsigned long long)(first + i));
		struct ibv_sge sge = {.addr = (uintptr_t)out, .length = MSG, .lkey = mr->lkey};
		struct ibv_send_wr wr = {.wr_id = first + i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bad = NULL;
		CHECK(ibv_post_send(a, &wr, &bad) == 0);
		CHECK(poll_one(acq).wr_id == first + i);
	}
}

// recv_n checks that n receives numbered from first completed in order with their message.
static void recv_n(struct ibv_cq *bcq, uint64_t first, int n) {
	for (int i = 0; i < n; i++) {
		struct ibv_wc wc = poll_one(bcq);
		CHECK(wc.wr_id == first + i && wc.opcode == IBV_WC_RECV && wc.byte_len == MSG);
		char want[MSG];
		snprintf(want, MSG, "msg %llu", (unsigned long long)wc.wr_id);
		CHECK(strcmp(buf + (wc.wr_id % GROWN) * MSG, want) == 0);
	}
}

int main(void) {
	union ibv_gid gid;
	struct ibv_context *ctx = open_only_device(&gid);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	buf = calloc(GROWN + 1, MSG);
	CHECK(buf);
	mr = ibv_reg_mr(pd, buf, (GROWN + 1) * MSG, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr);

	struct ibv_srq_init_attr sia = {.attr = {.max_wr = DEPTH, .max_sge = 1}};
	srq = ibv_create_srq(pd, &sia);
	CHECK(srq && sia.attr.max_wr == DEPTH);

	// A full queue and too many SGEs: the errno rdma-core's providers give, bad_wr on the request.
	post_range(0, DEPTH);
	struct ibv_sge sges[2] = {{.addr = (uintptr_t)buf, .length = MSG, .lkey = mr->lkey},
				  {.addr = (uintptr_t)buf, .length = MSG, .lkey = mr->lkey}};
	struct ibv_recv_wr over = {.wr_id = 99, .sg_list = sges, .num_sge = 1}, *bad = NULL;
	CHECK(ibv_post_srq_recv(srq, &over, &bad) == ENOMEM && bad == &over);
	struct ibv_srq_attr sa = {.max_wr = GROWN};
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR) == 0);
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.max_wr == GROWN);
	over.num_sge = 2;
	bad = NULL;
	CHECK(ibv_post_srq_recv(srq, &over, &bad) == EINVAL && bad == &over);
	// More than the depth the SRQ was created with, queued before any message arrives.
	post_range(DEPTH, GROWN);
	sa.srq_limit = 3;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == 0);

	struct ibv_cq *acq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq *bcq = ibv_create_cq(ctx, GROWN, NULL, NULL, 0);
	CHECK(acq && bcq);
	struct ibv_qp_init_attr ia = {.send_cq = acq, .recv_cq = acq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *a = ibv_create_qp(pd, &ia);
	ia.send_cq = ia.recv_cq = bcq;
	ia.srq = srq;
	struct ibv_qp *b = ibv_create_qp(pd, &ia);
	CHECK(a && b);
	connect_rc(a, b->qp_num, &gid, IBV_MTU_1024, 0);
	connect_rc(b, a->qp_num, &gid, IBV_MTU_1024, 0);

	// Draining all but two takes the SRQ below its limit of 3.
	send_n(a, acq, 0, GROWN - 2);
	recv_n(bcq, 0, GROWN - 2);
	struct ibv_async_event ev;
	struct pollfd pfd = {.fd = ctx->async_fd, .events = POLLIN};
	for (;;) {
		CHECK(poll(&pfd, 1, 5000) == 1);
		CHECK(ibv_get_async_event(ctx, &ev) == 0);
		ibv_ack_async_event(&ev);
		if (ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED)
			break;
		CHECK(ev.event_type == IBV_EVENT_PORT_ACTIVE);
	}
	CHECK(ev.element.srq == srq);
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.srq_limit == 0);

	// Rounds that post a few and receive them, so the SRQ's ring wraps many times.
	uint64_t next = GROWN;
	send_n(a, acq, GROWN - 2, 2);
	recv_n(bcq, GROWN - 2, 2);
	for (int r = 0; r < ROUNDS; r++) {
		int n = 1 + r % 7;
		post_range(next, next + n);
		send_n(a, acq, next, n);
		recv_n(bcq, next, n);
		next += n;
	}

	CHECK(ibv_destroy_srq(srq) == EBUSY);
	CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0 && ibv_destroy_srq(srq) == 0);
	CHECK(ibv_destroy_cq(acq) == 0 && ibv_destroy_cq(bcq) == 0);
	CHECK(ibv_dereg_mr(mr) == 0 && ibv_dealloc_pd(pd) == 0 && ibv_close_device(ctx) == 0);
	printf("ok\n");
	return 0;
}
