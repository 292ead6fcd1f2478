// A librdmacm program checking IPv6 addresses as the kernel's RDMA-CM treats them, on the device
// of the interface argv[1], which has the global address argv[2], the link-local address argv[3]
// and the link-local address rxe derives from its MAC, argv[4]; argv[5] is another interface.
// A link-local address needs a scope naming its interface; the device is the one of the bound or
// resolved source address; the id's addresses carry the scope; the path record and the QP's
// address vector name the GIDs, at rxe's indices (0 the MAC's link-local address, then the
// interface's other IPv6 addresses, global before link-local). Client and server are ids of this
// one process. It prints "ok" and exits 0 when every check holds.

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gxcm.h"



static struct sockaddr_in6 addr6(const char *ip, uint32_t scope, int port) {
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_scope_id = scope};
	CHECK(inet_pton(AF_INET6, ip, &a.sin6_addr) == 1);
	return a;
}

// is6 requires sa to be ip with scope id scope.
static int is6(struct sockaddr *sa, const char *ip, uint32_t scope) {
	struct sockaddr_in6 want = addr6(ip, scope, 0);
	struct sockaddr_in6 *got = (struct sockaddr_in6 *)sa;
	return got->sin6_family == AF_INET6 && memcmp(&got->sin6_addr, &want.sin6_addr, 16) == 0 &&
	       got->sin6_scope_id == scope;
}

// bind_fails requires binding a new id to ip with scope to fail with errno want.
static void bind_fails(const char *ip, uint32_t scope, int want) {
	struct rdma_cm_id *id;
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	struct sockaddr_in6 a = addr6(ip, scope, 0);
	errno = 0;
	if (rdma_bind_addr(id, (struct sockaddr *)&a) != -1 || errno != want) {
		fprintf(stderr, "binding %s scope %u: errno %d, want %d\n", ip, scope, errno, want);
		exit(1);
	}
	CHECK(rdma_destroy_id(id) == 0);
}

static void make_qp(struct rdma_cm_id *id) {
	struct ibv_qp_init_attr a = {.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
				     .qp_type = IBV_QPT_RC, .sq_sig_all = 1};
	CHECK(rdma_create_qp(id, NULL, &a) == 0);
}

// connect_to listens on ip (scope: its interface's index, 0 for a global address) and connects to
// it from an id whose source the library resolves, which must be ip too (the routing table's
// source for a local address is that address), on the device of ifname; gid_index is ip's GID's.
static void connect_to(const char *ifname, const char *ip, uint32_t scope, int gid_index, int port) {
	struct rdma_cm_id *listen, *id;
	CHECK(rdma_create_id(ch, &listen, NULL, RDMA_PS_TCP) == 0);
	struct sockaddr_in6 la = addr6(ip, scope, port);
	CHECK(rdma_bind_addr(listen, (struct sockaddr *)&la) == 0);
	CHECK(listen->verbs != NULL);
	char want[IF_NAMESIZE + 8];
	snprintf(want, sizeof(want), "gorxe_%s", ifname);
	CHECK(strcmp(ibv_get_device_name(listen->verbs->device), want) == 0);
	CHECK(is6(rdma_get_local_addr(listen), ip, scope));
	CHECK(rdma_listen(listen, 4) == 0);

	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&la, 2000) == 0);
	ack_next(RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL);
	CHECK(id->verbs == listen->verbs);
	CHECK(is6(rdma_get_local_addr(id), ip, scope));
	CHECK(is6(rdma_get_peer_addr(id), ip, scope));
	CHECK(rdma_resolve_route(id, 2000) == 0);
	ack_next(RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL);
	struct ibv_sa_path_rec *path = id->route.path_rec;
	CHECK(id->route.num_paths == 1 && path != NULL);
	CHECK(memcmp(path->sgid.raw, &la.sin6_addr, 16) == 0 && memcmp(path->dgid.raw, &la.sin6_addr, 16) == 0);
	union ibv_gid gid;
	CHECK(ibv_query_gid(id->verbs, 1, gid_index, &gid) == 0 && memcmp(gid.raw, &la.sin6_addr, 16) == 0);

	make_qp(id);
	struct rdma_conn_param cp = {.responder_resources = 1, .initiator_depth = 1, .retry_count = 7,
				     .rnr_retry_count = 7};
	CHECK(rdma_connect(id, &cp) == 0);
	struct rdma_cm_event *e = next(RDMA_CM_EVENT_CONNECT_REQUEST, 0, NULL);
	struct rdma_cm_id *req = e->id;
	CHECK(e->listen_id == listen && req->verbs == listen->verbs);
	CHECK(rdma_ack_cm_event(e) == 0);
	// The request's addresses, from a header that carries no scope, take the interface's.
	CHECK(is6(rdma_get_local_addr(req), ip, scope));
	CHECK(is6(rdma_get_peer_addr(req), ip, scope));
	make_qp(req);
	CHECK(rdma_accept(req, &cp) == 0);
	for (int up = 0; up < 2; up++)
		ack_next(RDMA_CM_EVENT_ESTABLISHED, 0, NULL);

	// The address vector a program that moves its own QP would take: ip's GID and its index.
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_RTR};
	int mask;
	CHECK(rdma_init_qp_attr(id, &qa, &mask) == 0);
	CHECK(qa.ah_attr.is_global && qa.ah_attr.grh.sgid_index == gid_index);
	CHECK(memcmp(qa.ah_attr.grh.dgid.raw, &la.sin6_addr, 16) == 0);

	CHECK(rdma_disconnect(id) == 0);
	for (int down = 0; down < 2; down++)
		ack_next(RDMA_CM_EVENT_DISCONNECTED, 0, NULL);
	rdma_destroy_qp(req);
	rdma_destroy_qp(id);
	CHECK(rdma_destroy_id(req) == 0);
	CHECK(rdma_destroy_id(id) == 0);
	CHECK(rdma_destroy_id(listen) == 0);
}

int main(int argc, char **argv) {
	CHECK(argc == 6);
	const char *ifname = argv[1], *global = argv[2], *ll = argv[3], *eui = argv[4];
	uint32_t scope = if_nametoindex(ifname), other = if_nametoindex(argv[5]);
	CHECK(scope != 0 && other != 0);
	ch = rdma_create_event_channel();
	CHECK(ch != NULL);

	// The GID table as rxe lays it out on the interface.
	struct rdma_cm_id *id;
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	struct sockaddr_in6 a = addr6(global, 0, 0);
	CHECK(rdma_bind_addr(id, (struct sockaddr *)&a) == 0);
	const char *order[] = {eui, global, ll};
	for (int i = 0; i < 3; i++) {
		union ibv_gid gid;
		struct sockaddr_in6 want = addr6(order[i], 0, 0);
		CHECK(ibv_query_gid(id->verbs, 1, i, &gid) == 0 && memcmp(gid.raw, &want.sin6_addr, 16) == 0);
	}
	CHECK(rdma_destroy_id(id) == 0);

	// A link-local address names no interface without a scope (EINVAL); on an interface without
	// it, no device has it (ENODEV); a global address no device has is EADDRNOTAVAIL.
	bind_fails(ll, 0, EINVAL);
	bind_fails(ll, other, ENODEV);
	bind_fails("fe80::6:7", scope, ENODEV);
	bind_fails("fd00:67::67", 0, EADDRNOTAVAIL);

	connect_to(ifname, global, 0, 1, 20886);
	connect_to(ifname, ll, scope, 2, 20887);
	connect_to(ifname, eui, scope, 0, 20888);
	printf("ok\n");
	return 0;
}
