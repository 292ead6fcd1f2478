// A verbs program against the distribution's headers that waits for completion events on a
// blocking channel, where ibv_get_cq_event waits for the device's sockets too and runs what
// arrives: a thread blocked in it gets the event of a message that arrives while it waits, and
// pthread_cancel ends such a wait. Events the channel's pipe has no room for (a program that arms
// its CQ again and again without reading the events) are all delivered once it reads them, in
// the number fired, and a CQ destroyed with its events unread does not wait for them, which
// ibv_get_cq_event then passes over. It prints "ok" and exits 0, or names the failed check and exits 1.

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "gxtest.h"

// More events than a pipe of the default 64 KiB holds at 8 bytes each.
enum { SIZE = 64, FLOOD = 9000 };

struct waiter {
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	void *cq_context;
	int rc;
};

static void *wait_event(void *arg) {
	struct waiter *w = arg;
	w->rc = ibv_get_cq_event(w->ch, &w->cq, &w->cq_context);
	return NULL;
}

int main(void) {
	union ibv_gid gid;
	struct ibv_context *ctx = open_only_device(&gid);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *buf = calloc(1, 2 * SIZE);
	CHECK(pd && buf);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 2 * SIZE, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	int tag;
	struct ibv_cq *scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 16, &tag, ch, 0);
	CHECK(mr && ch && scq && rcq);
	struct ibv_qp_init_attr ia = {.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *a = ibv_create_qp(pd, &ia);
	struct ibv_qp *b = ibv_create_qp(pd, &ia);
	CHECK(a && b);
	connect_rc(a, b->qp_num, &gid, IBV_MTU_1024, IBV_ACCESS_REMOTE_WRITE);
	connect_rc(b, a->qp_num, &gid, IBV_MTU_1024, IBV_ACCESS_REMOTE_WRITE);

	// A thread waits on the armed CQ; the message that fires the event arrives meanwhile.
	CHECK(ibv_req_notify_cq(rcq, 0) == 0);
	struct waiter w = {.ch = ch, .rc = -2};
	pthread_t th;
	CHECK(pthread_create(&th, NULL, wait_event, &w) == 0);
	struct ibv_sge rsge = {.addr = (uintptr_t)buf + SIZE, .length = SIZE, .lkey = mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 7, .sg_list = &rsge, .num_sge = 1};
	struct ibv_recv_wr *rbad;
	CHECK(ibv_post_recv(b, &rwr, &rbad) == 0);
	memcpy(buf, "an event, please", 16);
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 16, .lkey = mr->lkey};
	struct ibv_send_wr swr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad;
	CHECK(ibv_post_send(a, &swr, &bad) == 0);
	CHECK(pthread_join(th, NULL) == 0);
	CHECK(w.rc == 0 && w.cq == rcq && w.cq_context == &tag);
	ibv_ack_cq_events(rcq, 1);
	struct ibv_wc wc = poll_one(rcq);
	CHECK(wc.wr_id == 7 && wc.byte_len == 16 && memcmp(buf + SIZE, "an event, please", 16) == 0);
	poll_one(scq);

	// pthread_cancel ends a wait that nothing answers.
	CHECK(pthread_create(&th, NULL, wait_event, &w) == 0);
	CHECK(pthread_cancel(th) == 0);
	void *res;
	CHECK(pthread_join(th, &res) == 0 && res == PTHREAD_CANCELED);

	// FLOOD events fired without reading them: RDMA WRITEs with immediate each complete a receive
	// on the armed CQ, which the program polls and arms again.
	swr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	swr.wr.rdma.remote_addr = (uintptr_t)buf + SIZE;
	swr.wr.rdma.rkey = mr->rkey;
	for (int i = 0; i < FLOOD; i++) {
		CHECK(ibv_req_notify_cq(rcq, 0) == 0);
		CHECK(ibv_post_recv(b, &rwr, &rbad) == 0);
		CHECK(ibv_post_send(a, &swr, &bad) == 0);
		poll_one(scq);
		poll_one(rcq);
	}
	for (int i = 0; i < FLOOD; i++) {
		struct ibv_cq *got;
		void *got_ctx;
		CHECK(ibv_get_cq_event(ch, &got, &got_ctx) == 0 && got == rcq);
	}
	ibv_ack_cq_events(rcq, FLOOD);

	// A CQ destroyed with its events unread: ibv_destroy_cq does not wait for them, and
	// ibv_get_cq_event passes over them to the next CQ's event.
	struct ibv_cq *gone = ibv_create_cq(ctx, 16, NULL, ch, 0);
	CHECK(gone);
	struct ibv_qp_init_attr gia = ia;
	gia.send_cq = gone;
	struct ibv_qp *c = ibv_create_qp(pd, &gia);
	struct ibv_qp *d = ibv_create_qp(pd, &ia);
	CHECK(c && d);
	connect_rc(c, d->qp_num, &gid, IBV_MTU_1024, IBV_ACCESS_REMOTE_WRITE);
	connect_rc(d, c->qp_num, &gid, IBV_MTU_1024, IBV_ACCESS_REMOTE_WRITE);
	swr.opcode = IBV_WR_RDMA_WRITE;
	for (int i = 0; i < 3; i++) {
		CHECK(ibv_req_notify_cq(gone, 0) == 0);
		CHECK(ibv_post_send(c, &swr, &bad) == 0);
		poll_one(gone);
	}
	CHECK(ibv_destroy_qp(c) == 0 && ibv_destroy_qp(d) == 0 && ibv_destroy_cq(gone) == 0);
	CHECK(ibv_req_notify_cq(rcq, 0) == 0);
	CHECK(ibv_post_recv(b, &rwr, &rbad) == 0);
	swr.opcode = IBV_WR_SEND;
	CHECK(ibv_post_send(a, &swr, &bad) == 0);
	poll_one(scq);
	struct ibv_cq *got;
	void *got_ctx;
	CHECK(ibv_get_cq_event(ch, &got, &got_ctx) == 0 && got == rcq && got_ctx == &tag);
	ibv_ack_cq_events(rcq, 1);
	poll_one(rcq);

	CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0);
	CHECK(ibv_destroy_cq(rcq) == 0 && ibv_destroy_cq(scq) == 0);
	CHECK(ibv_destroy_comp_channel(ch) == 0);
	CHECK(ibv_dereg_mr(mr) == 0 && ibv_dealloc_pd(pd) == 0 && ibv_close_device(ctx) == 0);
	free(buf);
	printf("ok\n");
	return 0;
}
