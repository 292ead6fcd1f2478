// A librdmacm program against the distribution's rdma_cma.h, linked with gorxe's library: the
// event channel's fd (non-blocking, poll), the errors librdmacm reports for calls in the wrong
// state and for peers that refuse or cannot be reached, private data both ways, and a connection
// carrying traffic through rdma_verbs.h's inline helpers. Client and server are ids of this one
// process, on the device of the address argv[1]. It prints "ok" and exits 0 when every check
// holds.

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rdma/rdma_verbs.h>

#include "gxcm.h"




static struct sockaddr_in addr(const char *ip, int port) {
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	CHECK(inet_pton(AF_INET, ip, &a.sin_addr) == 1);
	return a;
}

// resolved returns a client id whose address and route to ip:port are resolved.
static struct rdma_cm_id *resolved(const char *ip, int port) {
	struct rdma_cm_id *id;
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	struct sockaddr_in dst = addr(ip, port);
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000) == 0);
	ack_next(RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL);
	// The id has its device and the device's PD, as with librdmacm.
	CHECK(id->verbs != NULL && id->pd != NULL && id->pd->context == id->verbs);
	CHECK(rdma_resolve_route(id, 2000) == 0);
	ack_next(RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL);
	// The path RDMA-CM resolves on RoCE: the peer's IPv4-mapped GID, hop limit 64, the default
	// P_Key.
	struct ibv_sa_path_rec *path = id->route.path_rec;
	CHECK(id->route.num_paths == 1 && path != NULL);
	CHECK(memcmp(&path->dgid.raw[12], &dst.sin_addr, 4) == 0 && path->dgid.raw[10] == 0xff);
	CHECK(path->hop_limit == 64 && path->pkey == htons(0xffff) && path->mtu >= IBV_MTU_1024);
	return id;
}

static void make_qp(struct rdma_cm_id *id) {
	struct ibv_qp_init_attr a = {.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
				     .qp_type = IBV_QPT_RC, .sq_sig_all = 1};
	CHECK(rdma_create_qp(id, NULL, &a) == 0);
	CHECK(id->qp && id->pd && id->send_cq && id->recv_cq && id->send_cq_channel && id->recv_cq_channel);
	CHECK(id->qp->pd == id->pd && id->qp->send_cq == id->send_cq);
	// rdma_verbs.h's rdma_get_*_comp wait on the channels and require the CQs' context to be the id.
	CHECK(id->send_cq->cq_context == id && id->recv_cq->cq_context == id);
}

static void *wait_event(void *arg) {
	struct rdma_cm_event *e;
	rdma_get_cm_event(arg, &e);
	return NULL;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	const char *ip = argv[1];
	const int port = 20886;

	ch = rdma_create_event_channel();
	CHECK(ch != NULL);
	// A non-blocking fd with nothing queued: EAGAIN, and poll finds nothing.
	CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0);
	struct rdma_cm_event *e;
	errno = 0;
	CHECK(rdma_get_cm_event(ch, &e) == -1 && errno == EAGAIN);
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	CHECK(poll(&p, 1, 0) == 0);

	// A thread blocked in rdma_get_cm_event waits in C, so pthread_cancel ends it.
	struct rdma_event_channel *blocking = rdma_create_event_channel();
	CHECK(blocking != NULL);
	pthread_t th;
	CHECK(pthread_create(&th, NULL, wait_event, blocking) == 0);
	CHECK(pthread_cancel(th) == 0);
	void *res;
	CHECK(pthread_join(th, &res) == 0 && res == PTHREAD_CANCELED);
	rdma_destroy_event_channel(blocking);

	// rdma_getaddrinfo without node and service takes the destination and the source from the
	// hints, as libfabric's verbs provider asks; with nothing at all it is EINVAL.
	struct sockaddr_in hd = addr(ip, port), hs = addr(ip, 0);
	struct rdma_addrinfo hints = {.ai_family = AF_INET, .ai_qp_type = IBV_QPT_RC, .ai_port_space = RDMA_PS_TCP,
				      .ai_src_len = sizeof(hs), .ai_dst_len = sizeof(hd),
				      .ai_src_addr = (struct sockaddr *)&hs, .ai_dst_addr = (struct sockaddr *)&hd};
	struct rdma_addrinfo *rai;
	CHECK(rdma_getaddrinfo(NULL, NULL, &hints, &rai) == 0);
	CHECK(rai->ai_dst_len == sizeof(hd) && memcmp(rai->ai_dst_addr, &hd, sizeof(hd)) == 0);
	CHECK(rai->ai_src_len == sizeof(hs) && memcmp(rai->ai_src_addr, &hs, sizeof(hs)) == 0);
	CHECK(rai->ai_family == AF_INET && rai->ai_qp_type == IBV_QPT_RC && rai->ai_port_space == RDMA_PS_TCP);
	rdma_freeaddrinfo(rai);
	errno = 0;
	CHECK(rdma_getaddrinfo(NULL, NULL, NULL, &rai) == -1 && errno == EINVAL);

	// The IB port space needs InfiniBand addressing: refused on RoCE.
	struct rdma_cm_id *id;
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_IB) == -1);

	// Calls in the wrong state.
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	errno = 0;
	CHECK(rdma_connect(id, NULL) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(rdma_resolve_route(id, 100) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(rdma_accept(id, NULL) == -1 && errno == EINVAL);
	// rdma_listen on an unbound id binds it to the IPv4 wildcard and an ephemeral port first, as
	// the kernel's does; binding it again is then the wrong state.
	CHECK(rdma_listen(id, 1) == 0);
	CHECK(rdma_get_local_addr(id)->sa_family == AF_INET && rdma_get_src_port(id) != 0);
	CHECK(((struct sockaddr_in *)rdma_get_local_addr(id))->sin_addr.s_addr == htonl(INADDR_ANY));
	struct sockaddr_in any = addr("0.0.0.0", 0);
	errno = 0;
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&any) == -1 && errno == EINVAL);
	CHECK(rdma_destroy_id(id) == 0);

	// rdma_migrate_id moves an id's events to another channel.
	struct rdma_event_channel *other = rdma_create_event_channel();
	CHECK(other != NULL);
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_migrate_id(id, other) == 0 && id->channel == other);
	struct sockaddr_in mdst = addr(ip, port);
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&mdst, 2000) == 0);
	CHECK(rdma_get_cm_event(other, &e) == 0);
	CHECK(e->event == RDMA_CM_EVENT_ADDR_RESOLVED && e->id == id);
	CHECK(poll(&p, 1, 0) == 0); // nothing on the first channel
	CHECK(rdma_ack_cm_event(e) == 0);
	CHECK(rdma_destroy_id(id) == 0);
	rdma_destroy_event_channel(other);

	// Handles the program already freed are refused with EINVAL, not dereferenced: perftest's -R
	// client retries its connection with the ids it destroyed.
	errno = 0;
	CHECK(rdma_ack_cm_event(e) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&mdst, 2000) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(rdma_destroy_id(id) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(rdma_get_cm_event(other, &e) == -1 && errno == EINVAL);
	rdma_destroy_event_channel(other);

	// An address no device has.
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	struct sockaddr_in none = addr("192.0.2.1", port);
	errno = 0;
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&none) == -1 && errno == EADDRNOTAVAIL);
	// A peer no device can reach (no IPv6 address here): ADDR_ERROR.
	struct sockaddr_in6 v6 = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	CHECK(inet_pton(AF_INET6, "2001:db8::1", &v6.sin6_addr) == 1);
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&v6, 2000) == 0);
	ack_next(RDMA_CM_EVENT_ADDR_ERROR, -EHOSTUNREACH, NULL);
	CHECK(rdma_destroy_id(id) == 0);

	// An id's SRQ: its QP goes on it; XRC SRQs are not supported.
	id = resolved(ip, port);
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 8, .max_sge = 1}};
	struct ibv_srq_init_attr_ex xa = {.comp_mask = IBV_SRQ_INIT_ATTR_TYPE, .srq_type = IBV_SRQT_XRC};
	errno = 0;
	CHECK(rdma_create_srq_ex(id, &xa) == -1 && errno == EOPNOTSUPP);
	CHECK(rdma_create_srq(id, NULL, &sa) == 0 && id->srq != NULL && sa.attr.max_wr >= 8);
	errno = 0;
	CHECK(rdma_create_srq(id, NULL, &sa) == -1 && errno == EBUSY);
	make_qp(id);
	CHECK(id->qp->srq == id->srq && id->srq->pd == id->pd);
	rdma_destroy_qp(id);
	rdma_destroy_srq(id);
	CHECK(id->srq == NULL);
	CHECK(rdma_destroy_id(id) == 0);

	// Nobody listens on the port: the peer's CM refuses with reason 8 (invalid service ID).
	id = resolved(ip, port);
	make_qp(id);
	struct rdma_conn_param cp = {.responder_resources = 1, .initiator_depth = 1, .retry_count = 7,
				     .rnr_retry_count = 7};
	CHECK(rdma_connect(id, &cp) == 0);
	ack_next(RDMA_CM_EVENT_REJECTED, 8, NULL);
	rdma_destroy_qp(id);
	CHECK(rdma_destroy_id(id) == 0);

	// A listener.
	struct rdma_cm_id *listen;
	CHECK(rdma_create_id(ch, &listen, NULL, RDMA_PS_TCP) == 0);
	struct sockaddr_in la = addr(ip, port);
	CHECK(rdma_bind_addr(listen, (struct sockaddr *)&la) == 0);
	CHECK(ntohs(rdma_get_src_port(listen)) == port);
	CHECK(listen->pd != NULL);
	CHECK(rdma_listen(listen, 4) == 0);

	// A request the server refuses, with private data both ways: REJECTED with reason 28
	// (consumer defined).
	id = resolved(ip, port);
	make_qp(id);
	cp.private_data = "hello";
	cp.private_data_len = 6;
	CHECK(rdma_connect(id, &cp) == 0);
	e = next(RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	CHECK(e->listen_id == listen && e->id != listen && e->id->pd == listen->pd);
	CHECK(e->param.conn.private_data_len >= 6 && memcmp(e->param.conn.private_data, "hello", 6) == 0);
	CHECK(e->param.conn.responder_resources == 1 && e->param.conn.initiator_depth == 1);
	struct rdma_cm_id *req = e->id;
	CHECK(req->verbs == id->verbs);
	// An id is destroyed only once its events are acked.
	errno = 0;
	CHECK(rdma_destroy_id(req) == -1 && errno == EBUSY);
	CHECK(rdma_ack_cm_event(e) == 0);
	CHECK(rdma_reject(req, "no", 3) == 0);
	CHECK(rdma_destroy_id(req) == 0);
	e = next(RDMA_CM_EVENT_REJECTED, 28, NULL);
	CHECK(e->param.conn.private_data_len >= 3 && memcmp(e->param.conn.private_data, "no", 3) == 0);
	CHECK(rdma_ack_cm_event(e) == 0);
	rdma_destroy_qp(id);
	CHECK(rdma_destroy_id(id) == 0);

	// A connection: ESTABLISHED on both sides, the REP's private data at the client, traffic
	// through rdma_verbs.h, then DISCONNECTED on both. Both sides ask for as many RDMA READs as
	// the device takes (RDMA_MAX_RESP_RES, RDMA_MAX_INIT_DEPTH, as libfabric does): the REQ
	// carries the device's most, and the accepted QP gets it; more than that is EINVAL.
	id = resolved(ip, port);
	struct ibv_device_attr da;
	CHECK(ibv_query_device(id->verbs, &da) == 0 && da.max_qp_rd_atom < RDMA_MAX_RESP_RES);
	make_qp(id);
	char cbuf[64] = "", sbuf[64] = "";
	struct ibv_mr *cmr = rdma_reg_msgs(id, cbuf, sizeof(cbuf));
	CHECK(cmr != NULL);
	CHECK(rdma_post_recv(id, NULL, cbuf, sizeof(cbuf), cmr) == 0);
	cp.private_data = "client";
	cp.private_data_len = 7;
	cp.responder_resources = RDMA_MAX_RESP_RES;
	cp.initiator_depth = RDMA_MAX_INIT_DEPTH;
	CHECK(rdma_connect(id, &cp) == 0);
	e = next(RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	CHECK(e->param.conn.responder_resources == da.max_qp_rd_atom &&
	      e->param.conn.initiator_depth == da.max_qp_init_rd_atom);
	req = e->id;
	CHECK(rdma_ack_cm_event(e) == 0);
	make_qp(req);
	struct ibv_mr *smr = rdma_reg_msgs(req, sbuf, sizeof(sbuf));
	CHECK(smr != NULL);
	CHECK(rdma_post_recv(req, NULL, sbuf, sizeof(sbuf), smr) == 0);
	struct rdma_conn_param ap = {.responder_resources = da.max_qp_rd_atom + 1, .initiator_depth = 1,
				     .rnr_retry_count = 7, .private_data = "server", .private_data_len = 7};
	errno = 0;
	CHECK(rdma_accept(req, &ap) == -1 && errno == EINVAL);
	ap.responder_resources = RDMA_MAX_RESP_RES;
	ap.initiator_depth = RDMA_MAX_INIT_DEPTH;
	CHECK(rdma_accept(req, &ap) == 0);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	CHECK(ibv_query_qp(req->qp, &qa, IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MAX_QP_RD_ATOMIC, &qia) == 0);
	CHECK(qa.max_dest_rd_atomic == da.max_qp_rd_atom && qa.max_rd_atomic == da.max_qp_init_rd_atom);
	// Both ESTABLISHED events, in either order.
	int client_up = 0, server_up = 0;
	while (!client_up || !server_up) {
		CHECK(poll(&p, 1, 20000) == 1);
		CHECK(rdma_get_cm_event(ch, &e) == 0);
		CHECK(e->event == RDMA_CM_EVENT_ESTABLISHED && e->status == 0);
		if (e->id == id) {
			CHECK(e->param.conn.private_data_len >= 7 &&
			      memcmp(e->param.conn.private_data, "server", 7) == 0);
			client_up = 1;
		} else {
			CHECK(e->id == req);
			server_up = 1;
		}
		CHECK(rdma_ack_cm_event(e) == 0);
	}
	errno = 0;
	CHECK(rdma_accept(req, &ap) == -1 && errno == EINVAL);
	strcpy(cbuf, "ping");
	CHECK(rdma_post_send(id, NULL, cbuf, 5, cmr, 0) == 0);
	struct ibv_wc wc;
	CHECK(rdma_get_send_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS);
	CHECK(rdma_get_recv_comp(req, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 5);
	CHECK(strcmp(sbuf, "ping") == 0);
	// A receive the server keeps posted: the client's hang-up leaves it, and the server's QP in
	// RTS, as librdmacm's DISCONNECTED does, until the server disconnects too.
	CHECK(rdma_post_recv(req, NULL, sbuf, sizeof(sbuf), smr) == 0);
	CHECK(rdma_disconnect(id) == 0);
	int client_down = 0, server_down = 0;
	while (!client_down || !server_down) {
		CHECK(poll(&p, 1, 20000) == 1);
		CHECK(rdma_get_cm_event(ch, &e) == 0);
		CHECK(e->event == RDMA_CM_EVENT_DISCONNECTED);
		if (e->id == id)
			client_down = 1;
		else
			server_down = e->id == req;
		CHECK(rdma_ack_cm_event(e) == 0);
	}
	struct ibv_qp_attr sqa;
	CHECK(ibv_query_qp(req->qp, &sqa, IBV_QP_STATE, &qia) == 0 && sqa.qp_state == IBV_QPS_RTS);
	CHECK(ibv_poll_cq(req->recv_cq, 1, &wc) == 0);
	CHECK(rdma_disconnect(req) == 0);
	CHECK(ibv_query_qp(req->qp, &sqa, IBV_QP_STATE, &qia) == 0 && sqa.qp_state == IBV_QPS_ERR);
	int flushed;
	time_t until = time(NULL) + 5;
	while ((flushed = ibv_poll_cq(req->recv_cq, 1, &wc)) == 0)
		CHECK(time(NULL) < until);
	CHECK(flushed == 1 && wc.status == IBV_WC_WR_FLUSH_ERR);
	CHECK(rdma_dereg_mr(cmr) == 0 && rdma_dereg_mr(smr) == 0);
	rdma_destroy_qp(id);
	rdma_destroy_qp(req);
	CHECK(rdma_destroy_id(id) == 0);
	CHECK(rdma_destroy_id(req) == 0);
	CHECK(rdma_destroy_id(listen) == 0);

	// UD: a multicast group joined and left, a service ID nobody resolves (UNREACHABLE, SIDR
	// status 1).
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP) == 0);
	struct sockaddr_in udst = addr(ip, port + 2);
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&udst, 2000) == 0);
	ack_next(RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL);
	CHECK(rdma_resolve_route(id, 2000) == 0);
	ack_next(RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL);
	struct ibv_qp_init_attr ua = {.cap = {.max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1},
				      .qp_type = IBV_QPT_UD};
	CHECK(rdma_create_qp(id, NULL, &ua) == 0);
	CHECK(id->qp->state == IBV_QPS_RTS);
	struct sockaddr_in group = addr("239.20.250.1", 0);
	int mc_context;
	CHECK(rdma_join_multicast(id, (struct sockaddr *)&group, &mc_context) == 0);
	e = next(RDMA_CM_EVENT_MULTICAST_JOIN, 0, NULL);
	CHECK(e->param.ud.qp_num == 0xffffff && e->param.ud.qkey == RDMA_UDP_QKEY);
	CHECK(e->param.ud.private_data == &mc_context);
	CHECK(e->param.ud.ah_attr.is_global && e->param.ud.ah_attr.grh.dgid.raw[15] == 1 &&
	      e->param.ud.ah_attr.grh.dgid.raw[12] == 239);
	CHECK(rdma_ack_cm_event(e) == 0);
	CHECK(rdma_leave_multicast(id, (struct sockaddr *)&group) == 0);
	errno = 0;
	CHECK(rdma_leave_multicast(id, (struct sockaddr *)&group) == -1 && errno == EADDRNOTAVAIL);
	CHECK(rdma_connect(id, NULL) == 0);
	ack_next(RDMA_CM_EVENT_UNREACHABLE, 1, NULL);
	rdma_destroy_qp(id);
	CHECK(rdma_destroy_id(id) == 0);

	// UD ids on QPs the programs keep themselves (conn_param's qp_num, no rdma_create_qp): the
	// client's ESTABLISHED names the server's QP and the UDP port space's Q_Key.
	struct rdma_cm_id *ulisten;
	CHECK(rdma_create_id(ch, &ulisten, NULL, RDMA_PS_UDP) == 0);
	struct sockaddr_in ula = addr(ip, port + 3);
	CHECK(rdma_bind_addr(ulisten, (struct sockaddr *)&ula) == 0);
	CHECK(rdma_listen(ulisten, 1) == 0);
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_UDP) == 0);
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&ula, 2000) == 0);
	ack_next(RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL);
	CHECK(rdma_resolve_route(id, 2000) == 0);
	ack_next(RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL);
	struct ibv_pd *upd = ibv_alloc_pd(id->verbs);
	struct ibv_cq *ucq = ibv_create_cq(id->verbs, 4, NULL, NULL, 0);
	CHECK(upd && ucq);
	struct ibv_qp_init_attr own = {.send_cq = ucq, .recv_cq = ucq, .qp_type = IBV_QPT_UD,
				       .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *cqp = ibv_create_qp(upd, &own), *sqp = ibv_create_qp(upd, &own);
	CHECK(cqp && sqp);
	struct rdma_conn_param up = {.qp_num = cqp->qp_num};
	CHECK(rdma_connect(id, &up) == 0);
	e = next(RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	struct rdma_cm_id *ureq = e->id;
	CHECK(rdma_ack_cm_event(e) == 0);
	up.qp_num = sqp->qp_num;
	CHECK(rdma_accept(ureq, &up) == 0);
	e = next(RDMA_CM_EVENT_ESTABLISHED, 0, NULL);
	CHECK(e->id == id && e->param.ud.qp_num == sqp->qp_num && e->param.ud.qkey == RDMA_UDP_QKEY);
	CHECK(e->param.ud.ah_attr.is_global && memcmp(&e->param.ud.ah_attr.grh.dgid.raw[12], &ula.sin_addr, 4) == 0);
	CHECK(rdma_ack_cm_event(e) == 0);
	CHECK(rdma_destroy_id(ureq) == 0 && rdma_destroy_id(id) == 0 && rdma_destroy_id(ulisten) == 0);
	CHECK(ibv_destroy_qp(cqp) == 0 && ibv_destroy_qp(sqp) == 0);
	CHECK(ibv_destroy_cq(ucq) == 0 && ibv_dealloc_pd(upd) == 0);

	// A listener destroyed while a request waits on its channel unretrieved: the request goes
	// with it, refused (REJECTED, reason 28).
	struct rdma_event_channel *ch2 = rdma_create_event_channel();
	CHECK(ch2 != NULL);
	CHECK(rdma_create_id(ch2, &listen, NULL, RDMA_PS_TCP) == 0);
	la = addr(ip, port + 1);
	CHECK(rdma_bind_addr(listen, (struct sockaddr *)&la) == 0);
	CHECK(rdma_listen(listen, 1) == 0);
	id = resolved(ip, port + 1);
	make_qp(id);
	CHECK(rdma_connect(id, &cp) == 0);
	struct pollfd p2 = {.fd = ch2->fd, .events = POLLIN};
	CHECK(poll(&p2, 1, 20000) == 1);
	CHECK(rdma_destroy_id(listen) == 0);
	ack_next(RDMA_CM_EVENT_REJECTED, 28, NULL);
	rdma_destroy_qp(id);
	CHECK(rdma_destroy_id(id) == 0);
	rdma_destroy_event_channel(ch2);
	rdma_destroy_event_channel(ch);
	printf("ok\n");
	return 0;
}
