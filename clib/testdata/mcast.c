// A verbs program against the distribution's headers that uses multicast: a UD QP attached to an
// IPv4 group (its GID the IPv4-mapped address) receives a UD SEND addressed to the group (QPN
// 0xFFFFFF), with the sender's GRH; detached, it no longer does. EINVAL for attaching an RC QP or
// a GID that is not multicast, and for detaching a QP that is not attached, as rxe answers. The
// group's last octets come from argv[1] so that concurrent runs use different groups. It prints
// "ok" and exits 0, or names the failed check and exits 1.

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "gxtest.h"

enum { QKEY = 0x11111111, MSG = 32, GRH = 40 };

static struct ibv_mr *mr;
static char *buf; // the receive slot (GRH + message), then the send slot

static void ready_ud(struct ibv_qp *qp) {
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY};
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) == 0);
	a.qp_state = IBV_QPS_RTR;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0);
	a.qp_state = IBV_QPS_RTS;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0);
}

static void post_recv(struct ibv_qp *qp) {
	struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = GRH + MSG, .lkey = mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1}, *bad;
	CHECK(ibv_post_recv(qp, &wr, &bad) == 0);
}

// send_to sends text to QPN qpn through ah and waits for its completion.
static void send_to(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_ah *ah, uint32_t qpn, const char *text) {
	char *out = buf + GRH + MSG;
	snprintf(out, MSG, "%s", text);
	struct ibv_sge sge = {.addr = (uintptr_t)out, .length = MSG, .lkey = mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = QKEY;
	CHECK(ibv_post_send(qp, &wr, &bad) == 0);
	CHECK(poll_one(cq).wr_id == 2);
}

static struct ibv_ah *ah_to(struct ibv_pd *pd, const union ibv_gid *dgid) {
	struct ibv_ah_attr a = {.is_global = 1, .port_num = 1};
	a.grh.dgid = *dgid;
	a.grh.sgid_index = GID_INDEX;
	a.grh.hop_limit = 1;
	struct ibv_ah *ah = ibv_create_ah(pd, &a);
	CHECK(ah);
	return ah;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	union ibv_gid gid;
	struct ibv_context *ctx = open_only_device(&gid);
	struct ibv_device_attr dattr;
	CHECK(ibv_query_device(ctx, &dattr) == 0 && dattr.max_mcast_grp > 0 && dattr.max_mcast_qp_attach > 0);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	buf = calloc(2, GRH + MSG);
	CHECK(buf);
	mr = ibv_reg_mr(pd, buf, 2 * (GRH + MSG), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 4, NULL, NULL, 0), *scq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	CHECK(rcq && scq);
	struct ibv_qp_init_attr ia = {.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_UD,
				      .cap = {.max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *u = ibv_create_qp(pd, &ia);
	ia.recv_cq = scq;
	struct ibv_qp *v = ibv_create_qp(pd, &ia);
	ia.qp_type = IBV_QPT_RC;
	struct ibv_qp *rc = ibv_create_qp(pd, &ia);
	CHECK(u && v && rc);
	ready_ud(u);
	ready_ud(v);

	// The group as a GID: the IPv4-mapped IPv6 address, as RoCEv2 maps IPv4 addresses.
	union ibv_gid group = {.raw = {[10] = 0xff, [11] = 0xff}};
	char addr[32];
	snprintf(addr, sizeof addr, "239.21.%s", argv[1]);
	CHECK(inet_pton(AF_INET, addr, &group.raw[12]) == 1);

	CHECK(ibv_attach_mcast(rc, &group, 0) == EINVAL);
	CHECK(ibv_attach_mcast(u, &gid, 0) == EINVAL);
	CHECK(ibv_detach_mcast(u, &group, 0) == EINVAL);
	CHECK(ibv_attach_mcast(u, &group, 0) == 0);

	struct ibv_ah *to_group = ah_to(pd, &group), *to_u = ah_to(pd, &gid);
	post_recv(u);
	send_to(v, scq, to_group, 0xffffff, "to the group");
	struct ibv_wc wc = poll_one(rcq);
	CHECK(wc.byte_len == GRH + MSG && (wc.wc_flags & IBV_WC_GRH) && wc.src_qp == v->qp_num);
	CHECK(strcmp(buf + GRH, "to the group") == 0);

	// Detached, u misses the group's next message and takes the unicast one sent after it.
	CHECK(ibv_detach_mcast(u, &group, 0) == 0);
	CHECK(ibv_detach_mcast(u, &group, 0) == EINVAL);
	post_recv(u);
	send_to(v, scq, to_group, 0xffffff, "to the group again");
	send_to(v, scq, to_u, u->qp_num, "to u");
	wc = poll_one(rcq);
	CHECK(wc.src_qp == v->qp_num && strcmp(buf + GRH, "to u") == 0);

	CHECK(ibv_destroy_ah(to_group) == 0 && ibv_destroy_ah(to_u) == 0);
	CHECK(ibv_destroy_qp(u) == 0 && ibv_destroy_qp(v) == 0 && ibv_destroy_qp(rc) == 0);
	CHECK(ibv_destroy_cq(rcq) == 0 && ibv_destroy_cq(scq) == 0);
	CHECK(ibv_dereg_mr(mr) == 0 && ibv_dealloc_pd(pd) == 0 && ibv_close_device(ctx) == 0);
	printf("ok\n");
	return 0;
}
