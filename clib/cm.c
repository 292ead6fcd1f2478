//go:build gorxe_clib

// librdmacm's connection manager: the C side owns the objects programs read (event channels,
// rdma_cm_id, rdma_cm_event, rdma_addrinfo) and the waits; the Go side (rdmacm.go) runs the
// protocol through gorxe's cm/rdmacm and posts the events. An id created without a channel is
// synchronous, as librdmacm's are: it gets a channel of its own and each call waits for its
// event.

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "clib.h"
#include "cm.h"
#include <rdma/rdma_verbs.h>
#include "_cgo_export.h"

#define ERR(e) (errno = (e), -1)

// BAD says p is not a live handle of the library's: NULL, freed, or never handed out.
#define BAD(p) (!gx_handle_live(p))

static struct gx_id *gid_of(struct rdma_cm_id *id) { return (struct gx_id *)id; }

struct rdma_event_channel *rdma_create_event_channel(void) {
	if (gx_forked_child())
		return NULL;
	struct gx_channel *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->ch.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (c->ch.fd < 0) {
		int e = errno;
		free(c);
		errno = e;
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	if (!gx_handle_add(c)) {
		close(c->ch.fd);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	return &c->ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel) {
	if (BAD(channel))
		return;
	gx_handle_del(channel);
	struct gx_channel *c = (struct gx_channel *)channel;
	close(c->ch.fd);
	for (struct gx_cm_event *e = c->head, *n; e; e = n) {
		n = e->next;
		free(e);
	}
	pthread_mutex_destroy(&c->mu);
	free(c);
}

struct rdma_cm_event *gx_cm_post(struct rdma_cm_id *id, struct rdma_cm_id *listen_id, int event, int status,
				  const void *pdata, int plen, struct rdma_conn_param *conn, struct rdma_ud_param *ud) {
	struct gx_cm_event *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->ev.id = id;
	e->ev.listen_id = listen_id;
	e->ev.event = event;
	e->ev.status = status;
	if (plen > GX_CM_PDATA)
		plen = GX_CM_PDATA;
	if (plen > 0)
		memcpy(e->pdata, pdata, plen);
	if (ud) {
		e->ev.param.ud = *ud; // a multicast join's private_data is the join's context
		if (plen > 0) {
			e->ev.param.ud.private_data = e->pdata;
			e->ev.param.ud.private_data_len = plen;
		}
	} else {
		if (conn)
			e->ev.param.conn = *conn;
		e->ev.param.conn.private_data = plen > 0 ? e->pdata : NULL;
		e->ev.param.conn.private_data_len = plen;
	}
	struct gx_channel *c = (struct gx_channel *)id->channel;
	pthread_mutex_lock(&c->mu);
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	uint64_t one = 1;
	(void)!write(c->ch.fd, &one, sizeof(one));
	pthread_mutex_unlock(&c->mu);
	return &e->ev;
}

void gx_cm_post_mcast(struct rdma_cm_id *id, struct rdma_ud_param *ud, void *context) {
	struct rdma_ud_param p = *ud;
	p.private_data = context;
	p.private_data_len = 0;
	gx_cm_post(id, NULL, RDMA_CM_EVENT_MULTICAST_JOIN, 0, NULL, 0, NULL, &p);
}

void gx_cm_drop_events(struct rdma_cm_id *id) {
	struct gx_channel *c = (struct gx_channel *)id->channel;
	pthread_mutex_lock(&c->mu);
	for (struct gx_cm_event *e = c->head; e; e = e->next)
		if (e->ev.id == id || e->ev.listen_id == id)
			e->dead = 1;
	pthread_mutex_unlock(&c->mu);
}

int gx_cm_unacked(struct rdma_cm_id *id) {
	struct gx_id *g = gid_of(id);
	pthread_mutex_lock(&g->mu);
	int n = g->unacked;
	pthread_mutex_unlock(&g->mu);
	return n;
}

static void attach_pd(struct rdma_cm_id *id);

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event) {
	if (BAD(channel) || !event)
		return ERR(EINVAL);
	struct gx_channel *c = (struct gx_channel *)channel;
	for (;;) {
		uint64_t one;
		ssize_t n = read(c->ch.fd, &one, sizeof(one));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(one))
			return -1;
		pthread_mutex_lock(&c->mu);
		struct gx_cm_event *e = c->head;
		if (e) {
			c->head = e->next;
			if (!c->head)
				c->tail = NULL;
		}
		if (e && !e->dead) {
			// Counted before the lock is released, so rdma_destroy_id sees it.
			struct gx_id *g = gid_of(e->ev.id);
			pthread_mutex_lock(&g->mu);
			g->unacked++;
			g->id.event = &e->ev;
			pthread_mutex_unlock(&g->mu);
		}
		pthread_mutex_unlock(&c->mu);
		if (!e)
			return ERR(EAGAIN);
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST && !e->dead && !gx_forked_child())
			gx_cm_request_retrieved(e->ev.listen_id, e->ev.id);
		if ((e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST || e->ev.event == RDMA_CM_EVENT_ADDR_RESOLVED) &&
		    !e->dead && !gx_forked_child())
			attach_pd(e->ev.id); // an event thread may handle it before rdma_resolve_addr returns
		if (e->dead) {
			free(e);
			continue;
		}
		gx_handle_add(e); // without memory the event still goes out; only its ack is refused
		*event = &e->ev;
		return 0;
	}
}

int rdma_ack_cm_event(struct rdma_cm_event *event) {
	if (BAD(event))
		return ERR(EINVAL);
	gx_handle_del(event);
	struct gx_id *g = gid_of(event->id);
	pthread_mutex_lock(&g->mu);
	g->unacked--;
	if (g->id.event == event)
		g->id.event = NULL;
	pthread_cond_broadcast(&g->acked);
	pthread_mutex_unlock(&g->mu);
	free(event);
	return 0;
}

static void free_id(struct gx_id *g);

static struct gx_id *new_id(struct rdma_event_channel *channel, void *context, enum rdma_port_space ps,
			    enum ibv_qp_type qp_type) {
	struct gx_id *g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->acked, NULL);
	if (!channel) {
		channel = rdma_create_event_channel();
		if (!channel) {
			free(g);
			return NULL;
		}
		g->sync = 1;
	}
	g->id.channel = channel;
	g->id.context = context;
	g->id.ps = ps;
	g->id.qp_type = qp_type;
	if (!gx_handle_add(g)) {
		free_id(g);
		errno = ENOMEM;
		return NULL;
	}
	return g;
}

static void free_id(struct gx_id *g) {
	gx_handle_del(g);
	if (g->sync)
		rdma_destroy_event_channel(g->id.channel);
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->acked);
	free(g);
}

void gx_cm_free_id(struct rdma_cm_id *id) { free_id(gid_of(id)); }

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		   enum rdma_port_space ps) {
	if (gx_forked_child())
		return -1;
	if (!id)
		return ERR(EINVAL);
	enum ibv_qp_type t;
	switch (ps) {
	case RDMA_PS_TCP:
		t = IBV_QPT_RC;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		t = IBV_QPT_UD;
		break;
	default:
		// RDMA_PS_IB needs InfiniBand addressing, which the kernel refuses on RoCE too.
		return ERR(EPROTONOSUPPORT);
	}
	struct gx_id *g = new_id(channel, context, ps, t);
	if (!g)
		return -1;
	gx_signals_onstack();
	int rc = gx_cm_create(&g->id);
	if (rc) {
		free_id(g);
		return ERR(rc);
	}
	*id = &g->id;
	return 0;
}

struct rdma_cm_id *gx_cm_child(struct rdma_cm_id *listen) {
	struct gx_id *g = new_id(listen->channel, listen->context, listen->ps, listen->qp_type);
	if (!g)
		return NULL;
	g->id.verbs = listen->verbs;
	g->id.port_num = listen->port_num;
	return &g->id;
}

// wait_event waits for the event a synchronous id's call produces and acks it: 0 when it is
// want, else -1 and the errno librdmacm gives the failure.
static int wait_event(struct rdma_cm_id *id, enum rdma_cm_event_type want) {
	struct rdma_cm_event *e;
	if (rdma_get_cm_event(id->channel, &e))
		return -1;
	enum rdma_cm_event_type got = e->event;
	int status = e->status;
	rdma_ack_cm_event(e);
	if (got == want && status == 0)
		return 0;
	if (got == RDMA_CM_EVENT_REJECTED)
		return ERR(ECONNREFUSED);
	if (status < 0)
		return ERR(-status);
	return ERR(status ? status : EIO);
}

static int finish(struct rdma_cm_id *id, int rc, enum rdma_cm_event_type want) {
	if (rc)
		return ERR(rc);
	return gid_of(id)->sync ? wait_event(id, want) : 0;
}

// ACK_WAIT_S bounds how long rdma_destroy_id waits for the id's events to be acked. librdmacm
// waits without a bound (another thread is about to ack: rping destroys its id while its event
// thread handles DISCONNECTED); a program that never acks gets EBUSY instead of a hang.
#define ACK_WAIT_S 2

int rdma_destroy_id(struct rdma_cm_id *id) {
	if (BAD(id))
		return ERR(EINVAL);
	if (gx_forked_child())
		return -1;
	struct gx_id *g = gid_of(id);
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += ACK_WAIT_S;
	pthread_mutex_lock(&g->mu);
	while (g->unacked > 0 && pthread_cond_timedwait(&g->acked, &g->mu, &deadline) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&g->mu);
	gx_signals_onstack();
	int rc = gx_cm_destroy(id);
	if (rc)
		return ERR(rc);
	free_id(gid_of(id));
	return 0;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr) {
	if (BAD(id) || !addr)
		return ERR(EINVAL);
	int rc = GX_CALL(gx_cm_bind(id, addr));
	if (rc)
		return ERR(rc);
	attach_pd(id);
	return 0;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		      int timeout_ms) {
	if (BAD(id) || !dst_addr)
		return ERR(EINVAL);
	int rc = GX_CALL(gx_cm_resolve_addr(id, src_addr, dst_addr));
	if (!rc)
		attach_pd(id);
	return finish(id, rc, RDMA_CM_EVENT_ADDR_RESOLVED);
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms) {
	if (BAD(id))
		return ERR(EINVAL);
	return finish(id, GX_CALL(gx_cm_resolve_route(id)), RDMA_CM_EVENT_ROUTE_RESOLVED);
}

int rdma_listen(struct rdma_cm_id *id, int backlog) {
	if (BAD(id))
		return ERR(EINVAL);
	int rc = GX_CALL(gx_cm_listen(id, backlog));
	return rc ? ERR(rc) : 0;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param) {
	if (BAD(id))
		return ERR(EINVAL);
	return finish(id, GX_CALL(gx_cm_connect(id, conn_param)), RDMA_CM_EVENT_ESTABLISHED);
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param) {
	if (BAD(id))
		return ERR(EINVAL);
	int rc = GX_CALL(gx_cm_accept(id, conn_param));
	if (id->ps != RDMA_PS_TCP) // a SIDR_REP was sent: UD's passive side has no event to wait for
		return rc ? ERR(rc) : 0;
	return finish(id, rc, RDMA_CM_EVENT_ESTABLISHED);
}

int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr, void *context) {
	if (BAD(id) || !attr || !(attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS))
		return ERR(EINVAL);
	int send_only = 0;
	if (attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) {
		if (attr->join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
			send_only = 1;
		else if (attr->join_flags != RDMA_MC_JOIN_FLAG_FULLMEMBER)
			return ERR(EINVAL);
	}
	int rc = GX_CALL(gx_cm_join(id, attr->addr, send_only, context));
	return rc ? ERR(rc) : 0;
}

int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context) {
	struct rdma_cm_join_mc_attr_ex a = {.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS, .addr = addr};
	return rdma_join_multicast_ex(id, &a, context);
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr) {
	if (BAD(id) || !addr)
		return ERR(EINVAL);
	int rc = GX_CALL(gx_cm_leave(id, addr));
	return rc ? ERR(rc) : 0;
}

// reject refuses a request with a REJ whose reason is rdma_reject's (consumer defined, 28) or,
// with ece, rdma_reject_ece's (vendor option not supported, 35); a UD id's request gets a
// SIDR_REP of status "rejected" either way, as the kernel's rdma_reject sends it.
static int reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len, int ece) {
	if (BAD(id))
		return ERR(EINVAL);
	int rc = GX_CALL(gx_cm_reject(id, (void *)private_data, private_data_len, ece));
	return rc ? ERR(rc) : 0;
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len) {
	return reject(id, private_data, private_data_len, 0);
}

int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len) {
	return reject(id, private_data, private_data_len, 1);
}

// rdma_set_local_ece and rdma_get_remote_ece serve programs that move their own QP, as
// librdmacm's do: both refuse an id with a QP (EINVAL), and a local ECE needs a vendor ID and no
// comp_mask bits. rdma_connect sends the local ECE in the REQ; rdma_accept answers with the
// REQ's vendor ID and the local options, as librdmacm does.
int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece) {
	if (BAD(id) || id->qp || !ece || !ece->vendor_id || ece->comp_mask)
		return ERR(EINVAL);
	struct gx_id *g = gid_of(id);
	g->local_ece.vendor_id = ece->vendor_id;
	g->local_ece.options = ece->options;
	return 0;
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece) {
	if (BAD(id) || id->qp || !ece)
		return ERR(EINVAL);
	struct gx_id *g = gid_of(id);
	ece->vendor_id = g->remote_ece.vendor_id;
	ece->options = g->remote_ece.options;
	ece->comp_mask = 0;
	return 0;
}

int rdma_establish(struct rdma_cm_id *id) {
	if (BAD(id))
		return ERR(EINVAL);
	int rc = GX_CALL(gx_cm_establish(id));
	return rc ? ERR(rc) : 0;
}

int rdma_disconnect(struct rdma_cm_id *id) {
	if (BAD(id))
		return ERR(EINVAL);
	int rc = GX_CALL(gx_cm_disconnect(id));
	return rc ? ERR(rc) : 0;
}

int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel) {
	if (BAD(id) || (channel && BAD(channel)))
		return ERR(EINVAL);
	struct gx_id *g = gid_of(id);
	if (gx_cm_unacked(id))
		return ERR(EBUSY);
	struct rdma_event_channel *old = id->channel;
	int was_sync = g->sync;
	if (!channel) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
		g->sync = 1;
	} else {
		g->sync = 0;
	}
	int rc = GX_CALL(gx_cm_migrate(id, channel));
	if (rc) {
		if (g->sync && !was_sync)
			rdma_destroy_event_channel(channel);
		g->sync = was_sync;
		return ERR(rc);
	}
	if (was_sync)
		rdma_destroy_event_channel(old);
	return 0;
}

// Default PDs: librdmacm allocates one per device for ids whose QP is created without a PD.
static pthread_mutex_t ctx_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ibv_context **ctxs;
static struct ibv_pd **pds;
static int nctx = -1;

static void open_contexts(void) {
	if (nctx >= 0)
		return;
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	nctx = 0;
	if (!list)
		return;
	ctxs = calloc(n + 1, sizeof(*ctxs));
	pds = calloc(n + 1, sizeof(*pds));
	if (!ctxs || !pds) {
		ibv_free_device_list(list);
		return;
	}
	for (int i = 0; i < n; i++) {
		struct ibv_context *c = ibv_open_device(list[i]);
		if (c)
			ctxs[nctx++] = c;
	}
	ibv_free_device_list(list);
}

struct ibv_context *gx_cm_context(int i) {
	pthread_mutex_lock(&ctx_mu);
	open_contexts();
	struct ibv_context *c = i >= 0 && i < nctx ? ctxs[i] : NULL;
	pthread_mutex_unlock(&ctx_mu);
	return c;
}

static struct ibv_pd *default_pd(struct ibv_context *verbs) {
	struct ibv_pd *pd = NULL;
	pthread_mutex_lock(&ctx_mu);
	for (int i = 0; i < nctx; i++) {
		if (ctxs[i] != verbs)
			continue;
		if (!pds[i])
			pds[i] = ibv_alloc_pd(verbs);
		pd = pds[i];
	}
	pthread_mutex_unlock(&ctx_mu);
	if (!pd && !errno)
		errno = ENODEV;
	return pd;
}

// attach_pd gives an id that has its device the device's PD, as librdmacm does once it knows
// the device (a bound or resolved address, a request): programs use id->pd for their own
// objects before any rdma_create_qp (UCX creates a UD QP on it). An id whose PD cannot be had
// keeps none, as before.
static void attach_pd(struct rdma_cm_id *id) {
	if (!id->verbs || __atomic_load_n(&id->pd, __ATOMIC_ACQUIRE))
		return;
	struct ibv_pd *pd = default_pd(id->verbs), *none = NULL;
	if (pd) // the same PD, whichever of the resolving thread and an event reader sets it
		__atomic_compare_exchange_n(&id->pd, &none, pd, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

struct ibv_context **rdma_get_devices(int *num_devices) {
	if (gx_forked_child())
		return NULL;
	pthread_mutex_lock(&ctx_mu);
	open_contexts();
	struct ibv_context **list = calloc(nctx + 1, sizeof(*list));
	if (list) {
		memcpy(list, ctxs, nctx * sizeof(*list));
		if (num_devices)
			*num_devices = nctx;
	}
	pthread_mutex_unlock(&ctx_mu);
	return list;
}

void rdma_free_devices(struct ibv_context **list) { free(list); }

// make_cq creates a CQ of n entries for id on a completion channel of its own. The CQ's context
// is the id: rdma_verbs.h's rdma_get_*_comp check it.
static struct ibv_cq *make_cq(struct rdma_cm_id *id, int n, struct ibv_comp_channel **ch) {
	*ch = ibv_create_comp_channel(id->verbs);
	if (!*ch)
		return NULL;
	struct ibv_cq *cq = ibv_create_cq(id->verbs, n > 0 ? n : 1, id, *ch, 0);
	if (!cq) {
		int e = errno;
		ibv_destroy_comp_channel(*ch);
		*ch = NULL;
		errno = e;
	}
	return cq;
}

static void drop_cqs(struct rdma_cm_id *id) {
	struct gx_id *g = gid_of(id);
	if (g->own_send_cq && id->send_cq) {
		ibv_destroy_cq(id->send_cq);
		ibv_destroy_comp_channel(id->send_cq_channel);
	}
	if (g->own_recv_cq && id->recv_cq) {
		ibv_destroy_cq(id->recv_cq);
		ibv_destroy_comp_channel(id->recv_cq_channel);
	}
	g->own_send_cq = g->own_recv_cq = 0;
	id->send_cq = id->recv_cq = NULL;
	id->send_cq_channel = id->recv_cq_channel = NULL;
}

// ready_qp moves a new QP where librdmacm leaves it: a connected QP in INIT, so receives can be
// posted before connecting; a UD QP in RTS with RDMA-CM's Q_Key.
static int ready_qp(struct ibv_qp *qp, struct rdma_cm_id *id) {
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = id->port_num ? id->port_num : 1};
	if (qp->qp_type == IBV_QPT_UD) {
		a.qkey = RDMA_UDP_QKEY;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
			return -1;
		a.qp_state = IBV_QPS_RTR;
		if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
			return -1;
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr) {
	if (BAD(id) || !qp_init_attr || !id->verbs)
		return ERR(EINVAL);
	if (id->qp)
		return ERR(EBUSY);
	if (pd && pd->context != id->verbs)
		return ERR(EINVAL);
	if (!pd && !(pd = default_pd(id->verbs)))
		return -1;
	struct gx_id *g = gid_of(id);
	struct ibv_qp_init_attr a = *qp_init_attr;
	if (!a.srq)
		a.srq = id->srq; // rdma_create_srq's
	if (!a.send_cq && !a.recv_cq) {
		if (!(id->send_cq = make_cq(id, a.cap.max_send_wr, &id->send_cq_channel)))
			goto fail;
		g->own_send_cq = 1;
		if (!(id->recv_cq = make_cq(id, a.cap.max_recv_wr, &id->recv_cq_channel)))
			goto fail;
		g->own_recv_cq = 1;
		a.send_cq = id->send_cq;
		a.recv_cq = id->recv_cq;
	} else if (!a.send_cq || !a.recv_cq) {
		// One CQ given serves both queues.
		a.send_cq = a.recv_cq = a.send_cq ? a.send_cq : a.recv_cq;
		id->send_cq = id->recv_cq = a.send_cq;
		id->send_cq_channel = id->recv_cq_channel = a.send_cq->channel;
	} else {
		id->send_cq = a.send_cq;
		id->recv_cq = a.recv_cq;
		id->send_cq_channel = a.send_cq->channel;
		id->recv_cq_channel = a.recv_cq->channel;
	}
	if (!a.qp_type)
		a.qp_type = id->qp_type;
	struct ibv_qp *qp = ibv_create_qp(pd, &a);
	if (!qp)
		goto fail;
	if (ready_qp(qp, id)) {
		int e = errno;
		ibv_destroy_qp(qp);
		errno = e;
		goto fail;
	}
	// As librdmacm's rdma_create_qp: the id's local ECE becomes the QP's (ibv_query_ece). rxe's
	// provider, which this library follows, has none (EOPNOTSUPP), so librdmacm zeroes it,
	// whatever rdma_set_local_ece set; it would then offer a request's ECE to the QP with
	// ibv_set_ece, which has nothing to take it either.
	struct ibv_ece ece = {0};
	int erc = ibv_query_ece(qp, &ece);
	if (erc && erc != EOPNOTSUPP) {
		ibv_destroy_qp(qp);
		errno = erc;
		goto fail;
	}
	g->local_ece.vendor_id = ece.vendor_id;
	g->local_ece.options = ece.options;
	qp_init_attr->cap = a.cap;
	id->qp = qp;
	id->pd = pd;
	id->qp_type = qp->qp_type;
	id->srq = a.srq;
	return 0;
fail:;
	int e = errno;
	drop_cqs(id);
	errno = e ? e : ENOMEM;
	return -1;
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr) {
	if (BAD(id) || !attr)
		return ERR(EINVAL);
	if (attr->comp_mask & ~IBV_QP_INIT_ATTR_PD)
		return ERR(EOPNOTSUPP);
	struct ibv_qp_init_attr a = {.qp_context = attr->qp_context, .send_cq = attr->send_cq,
				     .recv_cq = attr->recv_cq, .srq = attr->srq, .cap = attr->cap,
				     .qp_type = attr->qp_type, .sq_sig_all = attr->sq_sig_all};
	int rc = rdma_create_qp(id, (attr->comp_mask & IBV_QP_INIT_ATTR_PD) ? attr->pd : NULL, &a);
	if (!rc)
		attr->cap = a.cap;
	return rc;
}

// An id's shared receive queue (rdma_create_srq): rdma_create_qp puts the id's QP on it, and
// rdma_post_recv posts to it. XRC SRQs need XRC domains, which gorxe lacks, as rxe does.
int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr) {
	if (BAD(id) || !attr || !id->verbs)
		return ERR(EINVAL);
	if (id->srq)
		return ERR(EBUSY);
	if (attr->comp_mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD))
		return ERR(EOPNOTSUPP);
	if ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC)
		return ERR(EOPNOTSUPP);
	struct ibv_pd *pd = (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) ? attr->pd : NULL;
	if (pd && pd->context != id->verbs)
		return ERR(EINVAL);
	if (!pd && !(pd = id->pd ? id->pd : default_pd(id->verbs)))
		return -1;
	struct ibv_srq_init_attr a = {.srq_context = attr->srq_context, .attr = attr->attr};
	struct ibv_srq *srq = ibv_create_srq(pd, &a);
	if (!srq)
		return -1;
	attr->attr = a.attr;
	id->srq = srq;
	id->pd = pd;
	return 0;
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr) {
	if (!attr)
		return ERR(EINVAL);
	struct ibv_srq_init_attr_ex x = {.srq_context = attr->srq_context, .attr = attr->attr,
					 .comp_mask = IBV_SRQ_INIT_ATTR_TYPE | (pd ? IBV_SRQ_INIT_ATTR_PD : 0),
					 .srq_type = IBV_SRQT_BASIC, .pd = pd};
	int rc = rdma_create_srq_ex(id, &x);
	if (!rc)
		attr->attr = x.attr;
	return rc;
}

void rdma_destroy_srq(struct rdma_cm_id *id) {
	if (BAD(id) || !id->srq)
		return;
	if (!ibv_destroy_srq(id->srq))
		id->srq = NULL;
}

void rdma_destroy_qp(struct rdma_cm_id *id) {
	if (BAD(id) || !id->qp)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	drop_cqs(id);
}

int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask) {
	if (BAD(id) || !qp_attr || !qp_attr_mask)
		return ERR(EINVAL);
	int rc = GX_CALL(gx_cm_init_qp_attr(id, qp_attr, qp_attr_mask));
	return rc ? ERR(rc) : 0;
}

__be16 rdma_get_src_port(struct rdma_cm_id *id) {
	struct sockaddr *sa = &id->route.addr.src_addr;
	if (sa->sa_family == AF_INET6)
		return ((struct sockaddr_in6 *)sa)->sin6_port;
	return sa->sa_family == AF_INET ? ((struct sockaddr_in *)sa)->sin_port : 0;
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id) {
	struct sockaddr *sa = &id->route.addr.dst_addr;
	if (sa->sa_family == AF_INET6)
		return ((struct sockaddr_in6 *)sa)->sin6_port;
	return sa->sa_family == AF_INET ? ((struct sockaddr_in *)sa)->sin_port : 0;
}

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen) {
	if (BAD(id) || !optval)
		return ERR(EINVAL);
	struct gx_id *g = gid_of(id);
	switch (level) {
	case RDMA_OPTION_ID:
		switch (optname) {
		case RDMA_OPTION_ID_TOS:
			if (optlen != sizeof(uint8_t))
				return ERR(EINVAL);
			g->tos = *(uint8_t *)optval;
			g->tos_set = 1;
			return 0;
		case RDMA_OPTION_ID_REUSEADDR:
		case RDMA_OPTION_ID_AFONLY:
			return optlen == sizeof(int) ? 0 : ERR(EINVAL);
		case RDMA_OPTION_ID_ACK_TIMEOUT:
			if (optlen != sizeof(uint8_t))
				return ERR(EINVAL);
			g->ack_timeout = *(uint8_t *)optval;
			return 0;
		}
		break;
	case RDMA_OPTION_IB:
		// Paths are RDMA-CM's own on RoCE; a program's path record is accepted and unused.
		if (optname == RDMA_OPTION_IB_PATH)
			return 0;
		break;
	}
	return ERR(ENOPROTOOPT);
}

int gx_sockaddr(const struct sockaddr *sa, uint8_t ip[16], uint16_t *port, uint32_t *scope) {
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)sa;
		memset(ip, 0, 10);
		ip[10] = ip[11] = 0xff;
		memcpy(ip + 12, &s->sin_addr, 4);
		*port = ntohs(s->sin_port);
		*scope = 0;
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;
		memcpy(ip, &s->sin6_addr, 16);
		*port = ntohs(s->sin6_port);
		*scope = s->sin6_scope_id;
		return AF_INET6;
	}
	return 0;
}

void gx_set_sockaddr(struct sockaddr_storage *sa, const uint8_t ip[16], int is4, uint16_t port, uint32_t scope) {
	memset(sa, 0, sizeof(*sa));
	if (is4) {
		struct sockaddr_in *s = (struct sockaddr_in *)sa;
		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, ip + 12, 4);
		s->sin_port = htons(port);
		return;
	}
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)sa;
	s->sin6_family = AF_INET6;
	memcpy(&s->sin6_addr, ip, 16);
	s->sin6_port = htons(port);
	s->sin6_scope_id = scope;
}
