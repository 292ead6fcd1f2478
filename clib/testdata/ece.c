// Enhanced Connection Establishment through librdmacm's calls, against the distribution's
// rdma_cma.h and linked with gorxe's library: ids whose programs move their own QPs set their
// local ECE with rdma_set_local_ece and read the peer's with rdma_get_remote_ece (the server from
// the REQ, the client from the REP, which answers with the REQ's vendor ID and the server's
// options, as librdmacm's rdma_accept does); ids with a QP of rdma_create_qp refuse both calls
// and send no ECE (rxe's provider has none for librdmacm to take from the QP); rdma_reject_ece
// refuses a request, and the client sees REJECTED with status 35 and the private data. Client and
// server are ids of this one process, on the device of the address argv[1]. It prints "ok" and
// exits 0 when every check holds.

#include <arpa/inet.h>
#include "gxcm.h"



static struct sockaddr_in addr(const char *ip, int port) {
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	CHECK(inet_pton(AF_INET, ip, &a.sin_addr) == 1);
	return a;
}

static struct rdma_cm_id *resolved(struct sockaddr_in *dst) {
	struct rdma_cm_id *id;
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)dst, 2000) == 0);
	ack_next(RDMA_CM_EVENT_ADDR_RESOLVED, 0, id);
	CHECK(rdma_resolve_route(id, 2000) == 0);
	ack_next(RDMA_CM_EVENT_ROUTE_RESOLVED, 0, id);
	return id;
}

// move takes the program's own qp through INIT, RTR and RTS with the id's attributes.
static void move(struct rdma_cm_id *id, struct ibv_qp *qp) {
	enum ibv_qp_state states[] = {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS};
	for (int i = 0; i < 3; i++) {
		struct ibv_qp_attr a = {.qp_state = states[i]};
		int mask;
		CHECK(rdma_init_qp_attr(id, &a, &mask) == 0);
		CHECK(ibv_modify_qp(qp, &a, mask) == 0);
	}
	CHECK(qp->state == IBV_QPS_RTS);
}

static void check_ece(struct rdma_cm_id *id, uint32_t vendor_id, uint32_t options) {
	struct ibv_ece e = {.comp_mask = 7};
	CHECK(rdma_get_remote_ece(id, &e) == 0);
	if (e.vendor_id != vendor_id || e.options != options || e.comp_mask != 0) {
		fprintf(stderr, "remote ECE vendor %#x options %#x comp_mask %#x, want %#x %#x 0\n", e.vendor_id,
			e.options, e.comp_mask, vendor_id, options);
		exit(1);
	}
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	struct sockaddr_in la = addr(argv[1], 20896);
	ch = rdma_create_event_channel();
	CHECK(ch != NULL);
	struct rdma_cm_id *listen;
	CHECK(rdma_create_id(ch, &listen, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_bind_addr(listen, (struct sockaddr *)&la) == 0);
	CHECK(rdma_listen(listen, 4) == 0);

	// Bad arguments to rdma_set_local_ece: no ECE, no vendor ID, comp_mask bits.
	struct rdma_cm_id *id = resolved(&la);
	errno = 0;
	CHECK(rdma_set_local_ece(id, NULL) == -1 && errno == EINVAL);
	struct ibv_ece bad = {.vendor_id = 0, .options = 1};
	errno = 0;
	CHECK(rdma_set_local_ece(id, &bad) == -1 && errno == EINVAL);
	bad = (struct ibv_ece){.vendor_id = 0x02c9a1, .comp_mask = 1};
	errno = 0;
	CHECK(rdma_set_local_ece(id, &bad) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(rdma_get_remote_ece(id, NULL) == -1 && errno == EINVAL);
	check_ece(id, 0, 0); // nothing received yet

	// Both sides move their own QPs: the client's ECE reaches the server with the REQ, and the
	// REP brings back the REQ's vendor ID with the server's options.
	struct ibv_pd *pd = ibv_alloc_pd(id->verbs);
	struct ibv_cq *cq = ibv_create_cq(id->verbs, 8, NULL, NULL, 0);
	CHECK(pd && cq);
	struct ibv_qp_init_attr qa = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *cqp = ibv_create_qp(pd, &qa), *sqp = ibv_create_qp(pd, &qa);
	CHECK(cqp && sqp);
	// rxe's provider has no ECE: EOPNOTSUPP from both verbs, and errno set only for a zero
	// vendor ID, as libibverbs answers.
	struct ibv_ece qe = {0};
	CHECK(ibv_query_ece(cqp, &qe) == EOPNOTSUPP);
	qe.vendor_id = 0x02c9a1;
	errno = 0;
	CHECK(ibv_set_ece(cqp, &qe) == EOPNOTSUPP && errno == 0);
	qe.vendor_id = 0;
	CHECK(ibv_set_ece(cqp, &qe) == EOPNOTSUPP && errno == EOPNOTSUPP);

	struct ibv_ece mine = {.vendor_id = 0x02c9a1, .options = 0xfedcba98};
	CHECK(rdma_set_local_ece(id, &mine) == 0);
	struct rdma_conn_param cp = {.qp_num = cqp->qp_num, .responder_resources = 1, .initiator_depth = 1,
				     .retry_count = 7, .rnr_retry_count = 7};
	CHECK(rdma_connect(id, &cp) == 0);
	struct rdma_cm_event *e = next(RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	struct rdma_cm_id *req = e->id;
	CHECK(rdma_ack_cm_event(e) == 0);
	check_ece(req, 0x02c9a1, 0xfedcba98);
	struct ibv_ece theirs = {.vendor_id = 0x00abcd, .options = 0x5};
	CHECK(rdma_set_local_ece(req, &theirs) == 0);
	move(req, sqp);
	struct rdma_conn_param ap = {.qp_num = sqp->qp_num, .responder_resources = 1, .initiator_depth = 1,
				     .rnr_retry_count = 7};
	CHECK(rdma_accept(req, &ap) == 0);
	ack_next(RDMA_CM_EVENT_CONNECT_RESPONSE, 0, id);
	check_ece(id, 0x02c9a1, 0x5);
	move(id, cqp);
	CHECK(rdma_establish(id) == 0);
	ack_next(RDMA_CM_EVENT_ESTABLISHED, 0, req);
	check_ece(req, 0x02c9a1, 0xfedcba98); // unchanged
	CHECK(rdma_disconnect(id) == 0);
	int down = 0;
	while (down != 3) {
		e = next(RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
		down |= e->id == id ? 1 : e->id == req ? 2 : 0;
		CHECK(rdma_ack_cm_event(e) == 0);
	}
	CHECK(rdma_destroy_id(id) == 0 && rdma_destroy_id(req) == 0);
	CHECK(ibv_destroy_qp(cqp) == 0 && ibv_destroy_qp(sqp) == 0);
	CHECK(ibv_destroy_cq(cq) == 0 && ibv_dealloc_pd(pd) == 0);

	// An id with rdma_create_qp's QP: the QP's ECE (none, on rxe) replaced the one set before,
	// so the REQ carries none, and both calls refuse the id. The server refuses the request's
	// ECE: REJECTED with status 35, vendor option not supported, and its private data.
	id = resolved(&la);
	CHECK(rdma_set_local_ece(id, &mine) == 0);
	struct ibv_qp_init_attr ia = {.cap = {.max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1},
				      .qp_type = IBV_QPT_RC};
	CHECK(rdma_create_qp(id, NULL, &ia) == 0);
	errno = 0;
	CHECK(rdma_set_local_ece(id, &mine) == -1 && errno == EINVAL);
	struct ibv_ece got;
	errno = 0;
	CHECK(rdma_get_remote_ece(id, &got) == -1 && errno == EINVAL);
	cp.qp_num = 0;
	CHECK(rdma_connect(id, &cp) == 0);
	e = next(RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	req = e->id;
	CHECK(rdma_ack_cm_event(e) == 0);
	check_ece(req, 0, 0);
	errno = 0;
	CHECK(rdma_reject_ece(listen, NULL, 0) == -1 && errno == EINVAL); // not a request
	CHECK(rdma_reject_ece(req, "ece", 4) == 0);
	errno = 0;
	CHECK(rdma_reject_ece(req, NULL, 0) == -1 && errno == EINVAL); // answered already
	e = next(RDMA_CM_EVENT_REJECTED, 35, id);
	CHECK(e->param.conn.private_data_len >= 4 && memcmp(e->param.conn.private_data, "ece", 4) == 0);
	CHECK(rdma_ack_cm_event(e) == 0);
	rdma_destroy_qp(id);
	CHECK(rdma_destroy_id(id) == 0 && rdma_destroy_id(req) == 0 && rdma_destroy_id(listen) == 0);
	rdma_destroy_event_channel(ch);
	printf("ok\n");
	return 0;
}
