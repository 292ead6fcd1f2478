//go:build gorxe_clib

// librdmacm's convenience layer over the connection manager: rdma_getaddrinfo and the endpoint
// calls (rdma_create_ep, rdma_get_request, rdma_destroy_ep) that rdma_server and rdma_client use.

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "clib.h"
#include "cm.h"

#define ERR(e) (errno = (e), -1)

static struct sockaddr *copy_addr(const struct sockaddr *sa, socklen_t len) {
	struct sockaddr *c = malloc(len);
	if (c)
		memcpy(c, sa, len);
	return c;
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res) {
	while (res) {
		struct rdma_addrinfo *n = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = n;
	}
}

// resolve fills r with what getaddrinfo(3) gives for node and service: the destination, or with
// RAI_PASSIVE the source, with the QP type and port space of hints h, or RC and the TCP port
// space (UDP for a UD QP) when they name none. It returns getaddrinfo's code.
static int resolve(const char *node, const char *service, const struct rdma_addrinfo *h,
		   struct rdma_addrinfo *r) {
	struct addrinfo ah = {.ai_family = h->ai_family};
	if (h->ai_flags & RAI_PASSIVE)
		ah.ai_flags |= AI_PASSIVE;
	if (h->ai_flags & RAI_NUMERICHOST)
		ah.ai_flags |= AI_NUMERICHOST;
	ah.ai_socktype = h->ai_qp_type == IBV_QPT_UD ? SOCK_DGRAM : SOCK_STREAM;
	struct addrinfo *ai;
	int rc = getaddrinfo(node, service, &ah, &ai);
	if (rc) {
		// librdmacm returns getaddrinfo's code; errno says why for EAI_SYSTEM.
		if (rc != EAI_SYSTEM)
			errno = ENOENT;
		return rc;
	}
	r->ai_family = ai->ai_family;
	r->ai_qp_type = h->ai_qp_type ? h->ai_qp_type : IBV_QPT_RC;
	r->ai_port_space = h->ai_port_space ? h->ai_port_space : (r->ai_qp_type == IBV_QPT_UD ? RDMA_PS_UDP : RDMA_PS_TCP);
	struct sockaddr *a = copy_addr(ai->ai_addr, ai->ai_addrlen);
	if (a && (h->ai_flags & RAI_PASSIVE)) {
		r->ai_src_addr = a;
		r->ai_src_len = ai->ai_addrlen;
	} else if (a) {
		r->ai_dst_addr = a;
		r->ai_dst_len = ai->ai_addrlen;
	}
	freeaddrinfo(ai);
	return a ? 0 : EAI_MEMORY;
}

// rdma_getaddrinfo resolves node and service (resolve), or, given neither, takes the destination
// from the hints, as libfabric's verbs provider asks; either way a source address in the hints
// stands when the result has none. The flags, and without node and service the family, QP type
// and port space, are the hints'.
int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res) {
	if (!res || (!node && !service && !hints))
		return ERR(EINVAL);
	struct rdma_addrinfo h = {0};
	if (hints)
		h = *hints;
	struct rdma_addrinfo *r = calloc(1, sizeof(*r));
	if (!r)
		return ERR(ENOMEM);
	r->ai_flags = h.ai_flags;
	if (node || service) {
		int rc = resolve(node, service, &h, r);
		if (rc) {
			rdma_freeaddrinfo(r);
			if (rc == EAI_MEMORY)
				errno = ENOMEM;
			return rc;
		}
	} else {
		r->ai_family = h.ai_family;
		r->ai_qp_type = h.ai_qp_type;
		r->ai_port_space = h.ai_port_space;
		if (h.ai_dst_addr && h.ai_dst_len) {
			if (!(r->ai_dst_addr = copy_addr(h.ai_dst_addr, h.ai_dst_len)))
				goto nomem;
			r->ai_dst_len = h.ai_dst_len;
		}
	}
	if (!r->ai_src_len && h.ai_src_addr && h.ai_src_len) {
		if (!(r->ai_src_addr = copy_addr(h.ai_src_addr, h.ai_src_len)))
			goto nomem;
		r->ai_src_len = h.ai_src_len;
	}
	*res = r;
	return 0;
nomem:
	rdma_freeaddrinfo(r);
	return ERR(ENOMEM);
}

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr) {
	if (!id || !res)
		return ERR(EINVAL);
	struct rdma_cm_id *cid;
	if (rdma_create_id(NULL, &cid, NULL, res->ai_port_space))
		return -1;
	struct gx_id *g = (struct gx_id *)cid;
	int rc;
	if (res->ai_flags & RAI_PASSIVE) {
		if ((rc = rdma_bind_addr(cid, res->ai_src_addr)))
			goto fail;
		if (qp_init_attr) {
			g->ep_attr = *qp_init_attr;
			g->has_ep_attr = 1;
		}
		g->ep_pd = pd;
		*id = cid;
		return 0;
	}
	if ((rc = rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000)))
		goto fail;
	if ((rc = rdma_resolve_route(cid, 2000)))
		goto fail;
	if (qp_init_attr && (rc = rdma_create_qp(cid, pd, qp_init_attr)))
		goto fail;
	*id = cid;
	return 0;
fail:;
	int e = errno;
	rdma_destroy_ep(cid);
	errno = e;
	return -1;
}

void rdma_destroy_ep(struct rdma_cm_id *id) {
	if (!gx_handle_live(id))
		return;
	rdma_destroy_qp(id);
	rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id) {
	if (!gx_handle_live(listen) || !id)
		return ERR(EINVAL);
	struct gx_id *l = (struct gx_id *)listen;
	if (!l->sync)
		return ERR(EINVAL);
	struct rdma_cm_event *e;
	for (;;) {
		if (rdma_get_cm_event(listen->channel, &e))
			return -1;
		if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		rdma_ack_cm_event(e);
	}
	struct rdma_cm_id *cid = e->id;
	rdma_ack_cm_event(e);
	// The request's own calls wait on a channel of their own.
	if (rdma_migrate_id(cid, NULL))
		goto fail;
	if (l->has_ep_attr) {
		struct ibv_qp_init_attr a = l->ep_attr;
		if (rdma_create_qp(cid, l->ep_pd, &a))
			goto fail;
	}
	*id = cid;
	return 0;
fail:;
	int err = errno;
	rdma_reject(cid, NULL, 0);
	rdma_destroy_ep(cid);
	errno = err;
	return -1;
}
