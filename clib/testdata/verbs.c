// A verbs program against the distribution's headers: the errno conventions of libibverbs and
// traffic between two RC QPs of one device, including a completion channel used through poll(2)
// on its fd. It prints "ok" and exits 0, or names the failed check and exits 1.

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "gxtest.h"

enum { SIZE = 4096 };

static void ready_ud(struct ibv_qp *qp) {
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111};
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) == 0);
	a.qp_state = IBV_QPS_RTR;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0);
	a.qp_state = IBV_QPS_RTS;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0);
}

int main(void) {
	int num = 0;
	struct ibv_device **list = ibv_get_device_list(&num);
	CHECK(list && num == 1 && list[num] == NULL);
	CHECK(strncmp(ibv_get_device_name(list[0]), "gorxe_", 6) == 0);
	struct ibv_context *ctx = ibv_open_device(list[0]);
	CHECK(ctx);
	// A second context on the device shares its UDP port, as pyverbs' two test sides do.
	struct ibv_context *ctx2 = ibv_open_device(list[0]);
	CHECK(ctx2 && ctx2 != ctx);
	ibv_free_device_list(list);
	CHECK(ctx->async_fd >= 0 && ctx->cmd_fd >= 0);

	struct ibv_device_attr dattr;
	CHECK(ibv_query_device(ctx, &dattr) == 0);
	union ibv_gid gid;
	CHECK(ibv_query_gid(ctx, 1, GID_INDEX, &gid) == 0);
	CHECK(ibv_query_gid(ctx, 2, 0, &gid) == -1 && errno == EINVAL);
	CHECK(ibv_query_gid(ctx, 1, GID_INDEX, &gid) == 0);
	struct ibv_port_attr pattr;
	CHECK(ibv_query_port(ctx, 1, &pattr) == 0 && pattr.state == IBV_PORT_ACTIVE);
	CHECK(pattr.link_layer == IBV_LINK_LAYER_ETHERNET);
	CHECK(ibv_query_port(ctx, 2, &pattr) == EINVAL);
	__be16 pkey;
	CHECK(ibv_query_pkey(ctx, 1, 0, &pkey) == 0 && pkey == htobe16(0xffff));

	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx2);
	CHECK(pd2);
	CHECK(ibv_dealloc_pd(pd2) == 0 && ibv_close_device(ctx2) == 0);
	char *buf = calloc(1, 2 * SIZE);
	CHECK(buf);
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 2 * SIZE, access);
	CHECK(mr && mr->addr == buf && mr->length == 2 * SIZE && mr->lkey);

	// Bad input: the errno libibverbs reports.
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, 0, access) && errno == EINVAL);
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, 64, IBV_ACCESS_REMOTE_WRITE) && errno == EINVAL); // needs LOCAL_WRITE
	errno = 0;
	CHECK(!ibv_create_cq(ctx, 0, NULL, NULL, 0) && errno == EINVAL);
	errno = 0;
	CHECK(!ibv_create_cq(ctx, dattr.max_cqe + 1, NULL, NULL, 0) && errno == EINVAL);
	CHECK(ibv_dealloc_pd(pd) == EBUSY);
	struct ibv_cq_init_attr_ex cqx = {.cqe = 4, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP};
	errno = 0;
	CHECK(!ibv_create_cq_ex(ctx, &cqx) && errno == EOPNOTSUPP);

	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	CHECK(ch && ch->fd >= 0);
	struct ibv_cq *scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	int tag;
	struct ibv_cq *rcq = ibv_create_cq(ctx, 16, &tag, ch, 0);
	CHECK(scq && rcq && rcq->cqe >= 16 && rcq->channel == ch && rcq->cq_context == &tag);
	CHECK(ibv_destroy_comp_channel(ch) == -1 && errno == EBUSY);

	// A busy poll: a poll of an empty CQ made right after an empty one goes on looking at the
	// network for a while (20 µs) inside its one call into Go, so back-to-back polls spin; a
	// poll that looks once takes about a microsecond.
	int spun = 0;
	for (int i = 0; i < 100; i++) {
		struct ibv_wc wc;
		CHECK(ibv_poll_cq(scq, 1, &wc) == 0);
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		CHECK(ibv_poll_cq(scq, 1, &wc) == 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		spun += (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) >= 15000;
	}
	CHECK(spun >= 50);

	struct ibv_qp_init_attr ia = {.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1,
					      .max_inline_data = 64}};
	struct ibv_qp *a = ibv_create_qp(pd, &ia);
	struct ibv_qp *b = ibv_create_qp(pd, &ia);
	CHECK(a && b && a->qp_num != b->qp_num && a->state == IBV_QPS_RESET);
	CHECK(ibv_destroy_cq(scq) == EBUSY);

	// Posting to a QP in RESET fails on the first work request, which bad_wr names.
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 16, .lkey = mr->lkey};
	struct ibv_send_wr swr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad = NULL;
	CHECK(ibv_post_send(a, &swr, &bad) == EINVAL && bad == &swr);
	// RESET to RTS skips states.
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_RTS};
	CHECK(ibv_modify_qp(a, &qa, IBV_QP_STATE) == EINVAL && a->state == IBV_QPS_RESET);
	// RESET to INIT without the port.
	qa.qp_state = IBV_QPS_INIT;
	CHECK(ibv_modify_qp(a, &qa, IBV_QP_STATE) == EINVAL);

	connect_rc(a, b->qp_num, &gid, IBV_MTU_1024, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	connect_rc(b, a->qp_num, &gid, IBV_MTU_1024, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	struct ibv_qp_attr got;
	struct ibv_qp_init_attr gotInit;
	CHECK(ibv_query_qp(b, &got, IBV_QP_STATE | IBV_QP_DEST_QPN, &gotInit) == 0);
	CHECK(got.qp_state == IBV_QPS_RTS && got.dest_qp_num == a->qp_num && gotInit.cap.max_send_wr == 8);

	// The completion channel's fd honours O_NONBLOCK: nothing to read yet.
	CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0);
	struct ibv_cq *evcq;
	void *evctx;
	errno = 0;
	CHECK(ibv_get_cq_event(ch, &evcq, &evctx) == -1 && errno == EAGAIN);
	CHECK(ibv_req_notify_cq(rcq, 0) == 0);

	// SEND with immediate: b receives into the second half of buf.
	struct ibv_sge rsge = {.addr = (uintptr_t)buf + SIZE, .length = SIZE, .lkey = mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 7, .sg_list = &rsge, .num_sge = 1};
	struct ibv_recv_wr *rbad;
	CHECK(ibv_post_recv(b, &rwr, &rbad) == 0);
	memcpy(buf, "hello, gorxe....", 16);
	swr.opcode = IBV_WR_SEND_WITH_IMM;
	swr.imm_data = htobe32(0x01020304);
	CHECK(ibv_post_send(a, &swr, &bad) == 0);
	struct ibv_wc wc = poll_one(scq);
	CHECK(wc.wr_id == 1 && wc.opcode == IBV_WC_SEND && wc.qp_num == a->qp_num);

	// The event arrives on the fd: poll(2) sees it, ibv_get_cq_event returns the CQ.
	struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};
	CHECK(poll(&pfd, 1, 5000) == 1 && (pfd.revents & POLLIN));
	CHECK(ibv_get_cq_event(ch, &evcq, &evctx) == 0 && evcq == rcq && evctx == &tag);
	ibv_ack_cq_events(rcq, 1);
	wc = poll_one(rcq);
	CHECK(wc.wr_id == 7 && wc.opcode == IBV_WC_RECV && wc.byte_len == 16 && (wc.wc_flags & IBV_WC_WITH_IMM));
	CHECK(wc.imm_data == htobe32(0x01020304) && wc.qp_num == b->qp_num);
	CHECK(memcmp(buf + SIZE, "hello, gorxe....", 16) == 0);

	// RDMA WRITE of 100 bytes into b's region, then READ them back into a's.
	memset(buf, 'w', 100);
	sge.length = 100;
	swr.opcode = IBV_WR_RDMA_WRITE;
	swr.wr_id = 2;
	swr.wr.rdma.remote_addr = (uintptr_t)buf + SIZE + 200;
	swr.wr.rdma.rkey = mr->rkey;
	CHECK(ibv_post_send(a, &swr, &bad) == 0);
	wc = poll_one(scq);
	CHECK(wc.wr_id == 2 && wc.opcode == IBV_WC_RDMA_WRITE);
	CHECK(buf[SIZE + 200] == 'w' && buf[SIZE + 299] == 'w' && buf[SIZE + 300] == 0);
	memset(buf, 0, 100);
	swr.opcode = IBV_WR_RDMA_READ;
	swr.wr_id = 3;
	CHECK(ibv_post_send(a, &swr, &bad) == 0);
	wc = poll_one(scq);
	CHECK(wc.wr_id == 3 && wc.opcode == IBV_WC_RDMA_READ && buf[0] == 'w' && buf[99] == 'w');

	// ibv_rereg_mr keeps the region's keys, as rxe's and mlx5's do: the rkey a peer already has
	// still reaches the region.
	uint32_t lkey = mr->lkey, rkey = mr->rkey;
	errno = 0;
	CHECK(ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT && errno == EINVAL);
	errno = 0;
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT && errno == EINVAL);
	CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, access) == 0);
	CHECK(mr->lkey == lkey && mr->rkey == rkey && mr->addr == buf && mr->length == 2 * SIZE);
	memset(buf, 'r', 100);
	swr.opcode = IBV_WR_RDMA_WRITE;
	swr.wr_id = 5;
	swr.wr.rdma.remote_addr = (uintptr_t)buf + SIZE + 400;
	CHECK(ibv_post_send(a, &swr, &bad) == 0);
	wc = poll_one(scq);
	CHECK(wc.wr_id == 5 && buf[SIZE + 400] == 'r' && buf[SIZE + 499] == 'r');

	// A work request holds its send queue slot until its completion is polled, so a CQ as deep
	// as its queues never overruns: ten RDMA WRITEs fill a's eight slots and fail at the ninth
	// with ENOMEM; one poll gives one slot back.
	struct ibv_send_wr wrs[10];
	for (int i = 0; i < 10; i++) {
		wrs[i] = swr;
		wrs[i].opcode = IBV_WR_RDMA_WRITE;
		wrs[i].wr_id = 100 + i;
		wrs[i].next = i < 9 ? &wrs[i + 1] : NULL;
	}
	bad = NULL;
	CHECK(ibv_post_send(a, wrs, &bad) == ENOMEM && bad == &wrs[8]);
	CHECK(poll_one(scq).wr_id == 100);
	wrs[9].next = NULL;
	bad = NULL;
	CHECK(ibv_post_send(a, &wrs[8], &bad) == ENOMEM && bad == &wrs[9]);
	for (int i = 1; i < 9; i++)
		CHECK(poll_one(scq).wr_id == 100 + i);
	// An unsignaled request keeps its slot until a later signaled one's completion is polled.
	for (int i = 0; i < 8; i++) {
		wrs[i].send_flags = i == 7 ? IBV_SEND_SIGNALED : 0;
		wrs[i].next = i < 7 ? &wrs[i + 1] : NULL;
	}
	CHECK(ibv_post_send(a, wrs, &bad) == 0);
	CHECK(ibv_post_send(a, &wrs[9], &bad) == ENOMEM && bad == &wrs[9]);
	CHECK(poll_one(scq).wr_id == 107);
	CHECK(ibv_post_send(a, wrs, &bad) == 0);
	// Resizing keeps the queued completions in order.
	CHECK(ibv_resize_cq(scq, 32) == 0 && scq->cqe == 32);
	CHECK(poll_one(scq).wr_id == 107);
	swr.opcode = IBV_WR_RDMA_WRITE;
	for (int i = 0; i < 3; i++) {
		swr.wr_id = 200 + i;
		CHECK(ibv_post_send(a, &swr, &bad) == 0);
	}
	CHECK(ibv_resize_cq(scq, 16) == 0 && scq->cqe == 16);
	for (int i = 0; i < 3; i++)
		CHECK(poll_one(scq).wr_id == 200 + i);

	// An inline SEND: the payload is copied at post time, so the buffer may change at once.
	CHECK(ibv_post_recv(b, &rwr, &rbad) == 0);
	char msg[8] = "inline!";
	struct ibv_sge isge = {.addr = (uintptr_t)msg, .length = 8};
	swr.opcode = IBV_WR_SEND;
	swr.wr_id = 4;
	swr.sg_list = &isge;
	swr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	CHECK(ibv_post_send(a, &swr, &bad) == 0);
	memset(msg, 0, sizeof(msg));
	wc = poll_one(scq);
	CHECK(wc.wr_id == 4);
	wc = poll_one(rcq);
	CHECK(wc.byte_len == 8 && memcmp(buf + SIZE, "inline!", 8) == 0);
	// More inline data than the QP's max_inline_data (64) is refused, and so is more than any
	// QP takes; a good request before the bad one is posted.
	char big[600] = {0};
	struct ibv_sge bsge = {.addr = (uintptr_t)big, .length = 100};
	struct ibv_send_wr bwr = swr;
	bwr.sg_list = &bsge;
	bwr.send_flags = IBV_SEND_INLINE;
	bad = NULL;
	CHECK(ibv_post_send(a, &bwr, &bad) == EINVAL && bad == &bwr);
	bsge.length = sizeof(big);
	struct ibv_send_wr good = swr;
	good.send_flags = IBV_SEND_INLINE; // unsignaled
	good.next = &bwr;
	CHECK(ibv_post_recv(b, &rwr, &rbad) == 0);
	bad = NULL;
	CHECK(ibv_post_send(a, &good, &bad) == EINVAL && bad == &bwr);
	wc = poll_one(rcq);
	CHECK(wc.byte_len == 8);

	// Extended QPs: work requests built with the ibv_wr_* calls.
	CHECK(ibv_qp_to_qp_ex(a) == NULL);
	struct ibv_qp_init_attr_ex xia = {.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC, .pd = pd,
					  .cap = ia.cap, .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
					  .send_ops_flags = IBV_QP_EX_WITH_TSO};
	errno = 0;
	CHECK(!ibv_create_qp_ex(ctx, &xia) && errno == EOPNOTSUPP);
	xia.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_SEND_WITH_IMM;
	struct ibv_qp *xa = ibv_create_qp_ex(ctx, &xia);
	struct ibv_qp *xb = ibv_create_qp_ex(ctx, &xia);
	CHECK(xa && xb);
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(xa);
	CHECK(qx && ibv_qp_to_qp_ex(xb));
	connect_rc(xa, xb->qp_num, &gid, IBV_MTU_1024, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	connect_rc(xb, xa->qp_num, &gid, IBV_MTU_1024, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(ibv_post_recv(xb, &rwr, &rbad) == 0);
	memset(buf, 'x', 32);
	char note[6] = "wr_*!";
	ibv_wr_start(qx);
	qx->wr_id = 21;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, mr->rkey, (uintptr_t)buf + SIZE + 1000);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 32);
	qx->wr_id = 22;
	ibv_wr_send_imm(qx, htobe32(7));
	ibv_wr_set_inline_data(qx, note, sizeof(note));
	memset(note, 0, sizeof(note)); // copied already
	CHECK(ibv_wr_complete(qx) == 0);
	wc = poll_one(scq);
	CHECK(wc.wr_id == 21 && wc.opcode == IBV_WC_RDMA_WRITE);
	wc = poll_one(scq);
	CHECK(wc.wr_id == 22 && wc.opcode == IBV_WC_SEND);
	wc = poll_one(rcq);
	CHECK(wc.opcode == IBV_WC_RECV && wc.imm_data == htobe32(7) && wc.byte_len == 6);
	CHECK(memcmp(buf + SIZE, "wr_*!", 6) == 0 && buf[SIZE + 1000] == 'x' && buf[SIZE + 1031] == 'x');
	// A setter before any operation fails the batch at wr_complete, posting nothing.
	ibv_wr_start(qx);
	ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 32);
	CHECK(ibv_wr_complete(qx) == EINVAL);
	CHECK(ibv_destroy_qp(xa) == 0 && ibv_destroy_qp(xb) == 0);

	// UD: u sends to v through an address handle; v answers through one made from the
	// completion and the 40 bytes before the data.
	struct ibv_cq_init_attr_ex ucqx = {.cqe = 8, .wc_flags = IBV_WC_STANDARD_FLAGS};
	struct ibv_cq_ex *ucqex = ibv_create_cq_ex(ctx, &ucqx);
	CHECK(ucqex);
	struct ibv_cq *ucq = ibv_cq_ex_to_cq(ucqex);
	struct ibv_poll_cq_attr pattr0 = {0};
	CHECK(ibv_start_poll(ucqex, &pattr0) == ENOENT); // empty
	struct ibv_qp_init_attr uia = {.send_cq = ucq, .recv_cq = ucq, .qp_type = IBV_QPT_UD,
				       .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *u = ibv_create_qp(pd, &uia);
	struct ibv_qp *v = ibv_create_qp(pd, &uia);
	CHECK(u && v);
	ready_ud(u);
	ready_ud(v);
	// UCX sets all 32 bits of the flow label of its first path; the kernel takes the low 20.
	struct ibv_ah_attr ahattr = {.is_global = 1, .port_num = 1,
				     .grh = {.dgid = gid, .sgid_index = GID_INDEX, .hop_limit = 1, .flow_label = 0xffffffff}};
	struct ibv_ah *ah = ibv_create_ah(pd, &ahattr);
	CHECK(ah);
	struct ibv_sge usge = {.addr = (uintptr_t)buf + SIZE, .length = 40 + 64, .lkey = mr->lkey};
	struct ibv_recv_wr urwr = {.wr_id = 9, .sg_list = &usge, .num_sge = 1};
	CHECK(ibv_post_recv(v, &urwr, &rbad) == 0);
	CHECK(ibv_post_recv(u, &urwr, &rbad) == 0);
	memcpy(buf, "datagram", 8);
	sge.length = 8;
	swr.sg_list = &sge;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr_id = 5;
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = v->qp_num;
	swr.wr.ud.remote_qkey = 0x11111111;
	CHECK(ibv_post_send(u, &swr, &bad) == 0);
	struct ibv_wc uwc[2];
	int ngot = 0;
	time_t end = time(NULL) + 5;
	while (ngot < 2) {
		CHECK(time(NULL) < end);
		int n = ibv_poll_cq(ucq, 2 - ngot, uwc + ngot);
		CHECK(n >= 0);
		ngot += n;
	}
	struct ibv_wc *rwc = uwc[0].opcode == IBV_WC_RECV ? &uwc[0] : &uwc[1];
	CHECK(rwc->status == IBV_WC_SUCCESS && rwc->wr_id == 9 && rwc->byte_len == 40 + 8);
	CHECK((rwc->wc_flags & IBV_WC_GRH) && rwc->src_qp == u->qp_num);
	CHECK(rwc->sl == 0xa); // the network header, as ConnectX reports it: RoCEv2 (0x8), IPv4 (0x2)
	CHECK(memcmp(buf + SIZE + 40, "datagram", 8) == 0);
	struct ibv_ah_attr back;
	CHECK(ibv_init_ah_from_wc(ctx, 1, rwc, (struct ibv_grh *)(buf + SIZE), &back) == 0);
	CHECK(back.is_global && back.grh.sgid_index == GID_INDEX && memcmp(&back.grh.dgid, &gid, 16) == 0);
	struct ibv_ah *reply = ibv_create_ah_from_wc(pd, rwc, (struct ibv_grh *)(buf + SIZE), 1);
	CHECK(reply);
	swr.wr.ud.ah = reply;
	swr.wr.ud.remote_qpn = rwc->src_qp;
	swr.wr_id = 6;
	CHECK(ibv_post_send(v, &swr, &bad) == 0);
	ngot = 0;
	while (ngot < 2) {
		CHECK(time(NULL) < end);
		int n = ibv_poll_cq(ucq, 2 - ngot, uwc + ngot);
		CHECK(n >= 0);
		ngot += n;
	}
	rwc = uwc[0].opcode == IBV_WC_RECV ? &uwc[0] : &uwc[1];
	CHECK(rwc->status == IBV_WC_SUCCESS && rwc->src_qp == v->qp_num);
	// Once more, read through the extended CQ's poll calls.
	CHECK(ibv_post_recv(u, &urwr, &rbad) == 0);
	swr.wr_id = 8;
	CHECK(ibv_post_send(v, &swr, &bad) == 0);
	int seen = 0, rc;
	end = time(NULL) + 5;
	while ((rc = ibv_start_poll(ucqex, &pattr0)) == ENOENT)
		CHECK(time(NULL) < end);
	CHECK(rc == 0);
	for (;;) {
		CHECK(ucqex->status == IBV_WC_SUCCESS);
		if (ibv_wc_read_opcode(ucqex) == IBV_WC_RECV) {
			CHECK(ucqex->wr_id == 9 && ibv_wc_read_byte_len(ucqex) == 40 + 8);
			CHECK(ibv_wc_read_src_qp(ucqex) == v->qp_num && ibv_wc_read_qp_num(ucqex) == u->qp_num);
			CHECK((ibv_wc_read_wc_flags(ucqex) & IBV_WC_GRH) && ibv_wc_read_sl(ucqex) == 0xa);
			seen |= 1;
		} else {
			CHECK(ucqex->wr_id == 8 && ibv_wc_read_opcode(ucqex) == IBV_WC_SEND);
			seen |= 2;
		}
		if (seen == 3)
			break;
		while ((rc = ibv_next_poll(ucqex)) == ENOENT)
			CHECK(time(NULL) < end);
		CHECK(rc == 0);
	}
	ibv_end_poll(ucqex);
	CHECK(ibv_destroy_ah(ah) == 0 && ibv_destroy_ah(reply) == 0);
	CHECK(ibv_destroy_qp(u) == 0 && ibv_destroy_qp(v) == 0 && ibv_destroy_cq(ucq) == 0);

	// An SRQ: its attributes, its limit armed, and EBUSY while a QP uses it.
	struct ibv_srq_init_attr sia = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_srq *srq = ibv_create_srq(pd, &sia);
	CHECK(srq && sia.attr.max_wr >= 16);
	struct ibv_srq_attr sa;
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.max_wr >= 16 && sa.srq_limit == 0);
	sa.srq_limit = 4;
	CHECK(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT) == 0);
	CHECK(ibv_query_srq(srq, &sa) == 0 && sa.srq_limit == 4);
	struct ibv_qp_init_attr sqia = ia;
	sqia.srq = srq;
	struct ibv_qp *sq = ibv_create_qp(pd, &sqia);
	CHECK(sq && sq->srq == srq);
	CHECK(ibv_destroy_srq(srq) == EBUSY);
	CHECK(ibv_destroy_qp(sq) == 0 && ibv_destroy_srq(srq) == 0);

	// Resizing keeps the CQ and reports the new size in cq->cqe.
	CHECK(ibv_resize_cq(scq, 64) == 0 && scq->cqe >= 64);

	// The device reported its port active on async_fd when it came up.
	struct pollfd apfd = {.fd = ctx->async_fd, .events = POLLIN};
	CHECK(poll(&apfd, 1, 5000) == 1);
	struct ibv_async_event ev;
	CHECK(ibv_get_async_event(ctx, &ev) == 0);
	CHECK(ev.event_type == IBV_EVENT_PORT_ACTIVE && ev.element.port_num == 1);
	ibv_ack_async_event(&ev);

	// A child of fork() is refused at once instead of hanging in the parent's Go runtime.
	fflush(stdout);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		errno = 0;
		int refused = ibv_alloc_pd(ctx) == NULL && errno == EOPNOTSUPP;
		refused = refused && ibv_poll_cq(scq, 1, &wc) < 0 && ibv_post_send(a, &swr, &bad) == EOPNOTSUPP;
		_exit(refused ? 0 : 1);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);

	CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0);
	CHECK(ibv_destroy_cq(scq) == 0 && ibv_destroy_cq(rcq) == 0);
	CHECK(ibv_destroy_comp_channel(ch) == 0);
	CHECK(ibv_dereg_mr(mr) == 0);
	CHECK(ibv_dealloc_pd(pd) == 0);
	CHECK(ibv_close_device(ctx) == 0);
	free(buf);
	printf("ok\n");
	return 0;
}
