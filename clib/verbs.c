//go:build gorxe_clib

// The verbs gorxe implements: the C side allocates the objects programs read (ibv_pd, ibv_cq,
// ibv_qp, ...) and keeps their fields true, and hands the work to the Go side (the gx_*
// exports), which runs it on gorxe's public API.
//
// The data path stays in C: poll_cq and req_notify_cq in ring.c, the posts in post.c.

#define _GNU_SOURCE // pipe2, memfd_create
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <endian.h>
#include <sys/mman.h>

#include "clib.h"
#include "_cgo_export.h"

void gx_set_errno(int e) { errno = e; }

// After fork() only the forking thread lives on in the child, and the Go runtime behind this
// library cannot run there: a call would hang. So the child is told at once, and every verb
// fails with EOPNOTSUPP; fork followed by exec is unaffected.
static volatile int forked;

static void mark_child(void) { forked = 1; }

__attribute__((constructor)) static void watch_fork(void) { pthread_atfork(NULL, NULL, mark_child); }

int gx_is_forked_child(void) { return forked; }

int gx_forked_child(void) {
	if (!forked)
		return 0;
	static int told;
	if (!told) {
		told = 1;
		static const char msg[] = "gorxe: libibverbs cannot be used in a child of fork(): gorxe runs in the "
					  "parent's Go runtime, which fork does not copy (exec a program instead)\n";
		ssize_t n = write(2, msg, sizeof(msg) - 1);
		(void)n;
	}
	errno = EOPNOTSUPP;
	return 1;
}

// fail_null sets errno to rc and returns NULL, the failure of a verb that returns an object.
static void *fail_null(int rc) {
	errno = rc;
	return NULL;
}

// Devices.

struct ibv_device **ibv_get_device_list(int *num_devices) {
	if (gx_forked_child())
		return NULL;
	int n = 0;
	struct ibv_device **list = gx_device_list(&n);
	if (list && num_devices)
		*num_devices = n;
	return list;
}

void ibv_free_device_list(struct ibv_device **list) { free(list); }

const char *ibv_get_device_name(struct ibv_device *device) { return device ? device->name : NULL; }

__be64 ibv_get_device_guid(struct ibv_device *device) {
	return gx_forked_child() ? 0 : htobe64(gx_device_guid(device));
}

int ibv_get_device_index(struct ibv_device *device) { return gx_forked_child() ? -1 : gx_device_index(device); }

// Ops of the context (reached by the inline verbs of the program's own code).
static int op_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr,
			 size_t port_attr_len);

static int op_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size);
static struct ibv_cq_ex *op_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr);

static void close_fd(int *fd) {
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

struct ibv_context *ibv_open_device(struct ibv_device *device) {
	if (!device)
		return fail_null(EINVAL);
	struct verbs_context *v = calloc(1, sizeof(*v));
	if (!v)
		return fail_null(ENOMEM);
	struct ibv_context *ctx = &v->context;
	v->sz = sizeof(*v);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->device = device;
	ctx->num_comp_vectors = 1;
	ctx->ops.poll_cq = gx_poll_cq;
	ctx->ops.req_notify_cq = gx_req_notify_cq;
	ctx->ops.post_send = gx_post_send_op;
	ctx->ops.post_recv = gx_post_recv_op;
	ctx->ops.post_srq_recv = gx_post_srq_recv_op;
	ctx->ops.alloc_mw = gx_alloc_mw_op;
	ctx->ops.dealloc_mw = gx_dealloc_mw_op;
	ctx->ops.bind_mw = gx_bind_mw_op;
	v->query_port = op_query_port;
	v->query_device_ex = op_query_device_ex;
	v->create_cq_ex = op_create_cq_ex;
	v->create_qp_ex = gx_create_qp_ex;
	v->alloc_parent_domain = gx_alloc_parent_domain;
	pthread_mutex_init(&ctx->mutex, NULL);
	int afd[2] = {-1, -1};
	// A file of its own, so that a dup of cmd_fd names this context (ibv_import_device).
	ctx->cmd_fd = memfd_create(GX_CONTEXT_FILE, MFD_CLOEXEC);
	if (ctx->cmd_fd < 0 || pipe2(afd, O_CLOEXEC) < 0) {
		int e = errno;
		close_fd(&ctx->cmd_fd);
		free(v);
		return fail_null(e);
	}
	ctx->async_fd = afd[0];
	int rc = GX_CALL(gx_open(device, ctx, afd[1]));
	if (rc) {
		close(afd[0]);
		close(afd[1]);
		close_fd(&ctx->cmd_fd);
		free(v);
		return fail_null(rc);
	}
	return ctx;
}

int ibv_close_device(struct ibv_context *context) {
	int rc = GX_CALL(gx_close(context));
	if (rc)
		return rc;
	close_fd(&context->async_fd);
	close_fd(&context->cmd_fd);
	free(verbs_get_ctx(context));
	return 0;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr) {
	return GX_CALL(gx_query_device(context, device_attr));
}

// op_query_device_ex reports the attributes ibv_query_device does and, of the extended ones,
// the capability flags and the port count; gorxe has none of the features the others describe.
static int op_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size) {
	if ((input && input->comp_mask) || attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	struct ibv_device_attr_ex a;
	memset(&a, 0, sizeof(a));
	int rc = GX_CALL(gx_query_device(context, &a.orig_attr));
	if (rc)
		return rc;
	a.device_cap_flags_ex = a.orig_attr.device_cap_flags;
	a.phys_port_cnt_ex = a.orig_attr.phys_port_cnt;
	memset(attr, 0, attr_size);
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

static int op_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr,
			 size_t port_attr_len) {
	struct ibv_port_attr a;
	memset(&a, 0, sizeof(a));
	int rc = GX_CALL(gx_query_port(context, port_num, &a));
	if (rc)
		return rc;
	memcpy(port_attr, &a, port_attr_len < sizeof(a) ? port_attr_len : sizeof(a));
	return 0;
}

#undef ibv_query_port
// The exported ibv_query_port is the old entry point, which fills the attributes up to
// link_layer; the inline ibv_query_port of current headers uses the context's query_port.
int ibv_query_port(struct ibv_context *context, uint8_t port_num, struct _compat_ibv_port_attr *port_attr) {
	return op_query_port(context, port_num, (struct ibv_port_attr *)port_attr,
			     offsetof(struct ibv_port_attr, flags));
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid) {
	int rc = GX_CALL(gx_query_gid(context, port_num, index, gid->raw, NULL));
	if (rc == ENODATA)
		return 0; // an empty entry of the table reads as the zero GID
	if (rc) {
		errno = rc;
		return -1;
	}
	return 0;
}

// The GID types of libibverbs' private ABI (enum ibv_gid_type_sysfs of its driver.h, which the
// distribution does not install): RoCE v1 (or IB) is 0, RoCE v2 is 1.
enum { GX_GID_TYPE_SYSFS_IB_ROCE_V1 = 0, GX_GID_TYPE_SYSFS_ROCE_V2 = 1 };

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index, uint32_t *type) {
	union ibv_gid gid;
	uint32_t t = 0;
	int rc = GX_CALL(gx_query_gid(context, port_num, (int)index, gid.raw, &t));
	if (rc) {
		errno = rc;
		return -1;
	}
	*type = t == IBV_GID_TYPE_ROCE_V2 ? GX_GID_TYPE_SYSFS_ROCE_V2 : GX_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

static int fill_gid_entry(struct ibv_context *context, uint32_t port_num, uint32_t index,
			  struct ibv_gid_entry *entry) {
	uint32_t t = 0;
	memset(entry, 0, sizeof(*entry));
	int rc = GX_CALL(gx_query_gid(context, port_num, (int)index, entry->gid.raw, &t));
	if (rc)
		return rc;
	entry->gid_index = index;
	entry->port_num = port_num;
	entry->gid_type = t;
	entry->ndev_ifindex = gx_ifindex(context); // after a GX_CALL, so not in a child of fork
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size) {
	if (flags || entry_size < sizeof(*entry))
		return EINVAL;
	return fill_gid_entry(context, port_num, gid_index, entry);
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries, size_t max_entries,
			     uint32_t flags, size_t entry_size) {
	if (flags || entry_size < sizeof(*entries))
		return -EINVAL;
	if (gx_forked_child())
		return -EOPNOTSUPP;
	int n = gx_gid_count(context);
	if (n < 0)
		return -n;
	if ((size_t)n > max_entries)
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		int rc = fill_gid_entry(context, 1, i, &entries[i]);
		if (rc)
			return -rc;
	}
	return n;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey) {
	uint16_t p = 0;
	int rc = GX_CALL(gx_query_pkey(context, port_num, index, &p));
	if (rc) {
		errno = rc;
		return -1;
	}
	*pkey = htobe16(p);
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey) {
	for (int i = 0;; i++) {
		__be16 p;
		if (ibv_query_pkey(context, port_num, i, &p))
			return -1;
		if (p == pkey)
			return i;
	}
}

// Protection domains and memory regions.

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context) {
	struct ibv_pd *pd = calloc(1, sizeof(*pd));
	if (!pd)
		return fail_null(ENOMEM);
	pd->context = context;
	int rc = GX_CALL(gx_alloc_pd(pd));
	if (rc) {
		free(pd);
		return fail_null(rc);
	}
	return pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd) {
	int rc = GX_CALL(gx_dealloc_pd(pd));
	if (!rc)
		free(pd);
	return rc;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access) {
	struct ibv_mr *mr = calloc(1, sizeof(*mr));
	if (!mr)
		return fail_null(ENOMEM);
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	int rc = GX_CALL(gx_reg_mr(mr, iova, access));
	if (rc) {
		free(mr);
		return fail_null(rc);
	}
	return mr;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access) {
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

#undef ibv_reg_mr_iova
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access) {
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

int ibv_dereg_mr(struct ibv_mr *mr) {
	int rc = GX_CALL(gx_dereg_mr(mr));
	if (!rc)
		free(mr);
	return rc;
}

// Completion channels and CQs.

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context) {
	struct gx_comp_channel *g = calloc(1, sizeof(*g));
	if (!g)
		return fail_null(ENOMEM);
	pthread_mutex_init(&g->mu, NULL);
	struct ibv_comp_channel *ch = &g->ch;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		int e = errno;
		free(ch);
		return fail_null(e);
	}
	ch->context = context;
	ch->fd = fds[0];
	int rc = GX_CALL(gx_create_comp_channel(ch, fds[1]));
	if (rc) {
		close(fds[0]);
		close(fds[1]);
		free(ch);
		return fail_null(rc);
	}
	return ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel) {
	int rc = GX_CALL(gx_destroy_comp_channel(channel));
	if (rc) {
		errno = rc;
		return -1;
	}
	close(channel->fd);
	struct gx_comp_channel *g = (struct gx_comp_channel *)channel;
	pthread_mutex_destroy(&g->mu);
	free(g);
	return 0;
}

// create_cq creates a CQ, extended or not, with its ring.
static struct ibv_cq *create_cq(struct ibv_context *context, int cqe, void *cq_context,
				struct ibv_comp_channel *channel, int comp_vector) {
	if (comp_vector < 0 || comp_vector >= context->num_comp_vectors)
		return fail_null(EINVAL);
	if (cqe < 1)
		return fail_null(EINVAL);
	struct gx_cq *c = calloc(1, sizeof(*c));
	if (!c)
		return fail_null(ENOMEM);
	struct ibv_cq *cq = ibv_cq_ex_to_cq(&c->ex);
	cq->context = context;
	cq->channel = channel;
	cq->cq_context = cq_context;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
	pthread_mutex_init(&c->poll_mu, NULL);
	int rc = cqe > GX_MAX_CQE ? EINVAL : gx_ring_alloc((uint32_t)cqe, &c->hdr, &c->ents);
	if (!rc)
		rc = GX_CALL(gx_create_cq(cq, cqe, c->hdr, c->ents));
	if (rc) {
		gx_ring_free(c->hdr, c->ents);
		free(c);
		return fail_null(rc);
	}
	c->n = (uint32_t)cqe;
	if (channel) {
		struct gx_comp_channel *g = (struct gx_comp_channel *)channel;
		pthread_mutex_lock(&g->mu);
		c->chan_next = g->cqs;
		g->cqs = c;
		pthread_mutex_unlock(&g->mu);
	}
	return cq;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector) {
	return create_cq(context, cqe, cq_context, channel, comp_vector);
}

// Extended CQs: ibv_start_poll, ibv_next_poll and the ibv_wc_read_* calls read one completion
// at a time, polled into the CQ's current entry.

static struct ibv_wc *current(struct ibv_cq_ex *c) { return &((struct gx_cq *)c)->cur; }

static int ex_poll_one(struct ibv_cq_ex *c) {
	int n = gx_poll_cq(ibv_cq_ex_to_cq(c), 1, current(c));
	if (n < 0)
		return -n;
	if (n == 0)
		return ENOENT;
	c->status = current(c)->status;
	c->wr_id = current(c)->wr_id;
	return 0;
}

static int ex_start_poll(struct ibv_cq_ex *c, struct ibv_poll_cq_attr *attr) {
	if (attr && attr->comp_mask)
		return EINVAL;
	return ex_poll_one(c);
}

static void ex_end_poll(struct ibv_cq_ex *c) {}
static enum ibv_wc_opcode ex_read_opcode(struct ibv_cq_ex *c) { return current(c)->opcode; }
static uint32_t ex_read_vendor_err(struct ibv_cq_ex *c) { return current(c)->vendor_err; }
static uint32_t ex_read_byte_len(struct ibv_cq_ex *c) { return current(c)->byte_len; }
static __be32 ex_read_imm_data(struct ibv_cq_ex *c) { return current(c)->imm_data; }
static uint32_t ex_read_qp_num(struct ibv_cq_ex *c) { return current(c)->qp_num; }
static uint32_t ex_read_src_qp(struct ibv_cq_ex *c) { return current(c)->src_qp; }
static unsigned int ex_read_wc_flags(struct ibv_cq_ex *c) { return current(c)->wc_flags; }
static uint32_t ex_read_slid(struct ibv_cq_ex *c) { return current(c)->slid; }
static uint8_t ex_read_sl(struct ibv_cq_ex *c) { return current(c)->sl; }
static uint8_t ex_read_dlid_path_bits(struct ibv_cq_ex *c) { return current(c)->dlid_path_bits; }

// op_create_cq_ex creates an extended CQ reporting the standard fields; timestamps, VLANs, flow
// tags, tag matching and parent domains are not supported.
static struct ibv_cq_ex *op_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr) {
	if (attr->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS)
		return fail_null(EOPNOTSUPP);
	if (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS)
		return fail_null(EOPNOTSUPP);
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return fail_null(EOPNOTSUPP);
	if (attr->cqe > INT32_MAX)
		return fail_null(EINVAL);
	struct ibv_cq *cq = create_cq(context, (int)attr->cqe, attr->cq_context, attr->channel, (int)attr->comp_vector);
	if (!cq)
		return NULL;
	struct ibv_cq_ex *c = (struct ibv_cq_ex *)cq;
	c->start_poll = ex_start_poll;
	c->next_poll = ex_poll_one;
	c->end_poll = ex_end_poll;
	c->read_opcode = ex_read_opcode;
	c->read_vendor_err = ex_read_vendor_err;
	c->read_byte_len = ex_read_byte_len;
	c->read_imm_data = ex_read_imm_data;
	c->read_qp_num = ex_read_qp_num;
	c->read_src_qp = ex_read_src_qp;
	c->read_wc_flags = ex_read_wc_flags;
	c->read_slid = ex_read_slid;
	c->read_sl = ex_read_sl;
	c->read_dlid_path_bits = ex_read_dlid_path_bits;
	return c;
}

// ibv_destroy_cq waits until every event ibv_get_cq_event returned for the CQ is acknowledged, as
// libibverbs does; the CQ's events still unread in the channel are dropped.
int ibv_destroy_cq(struct ibv_cq *cq) {
	int rc = GX_CALL(gx_destroy_cq(cq));
	if (rc)
		return rc;
	struct gx_cq *c = (struct gx_cq *)cq;
	if (cq->channel) {
		struct gx_comp_channel *g = (struct gx_comp_channel *)cq->channel;
		pthread_mutex_lock(&g->mu);
		for (struct gx_cq **p = &g->cqs; *p; p = &(*p)->chan_next) {
			if (*p == c) {
				*p = c->chan_next;
				break;
			}
		}
		pthread_mutex_unlock(&g->mu);
	}
	pthread_mutex_lock(&cq->mutex);
	while (cq->comp_events_completed != c->events_reported)
		pthread_cond_wait(&cq->cond, &cq->mutex);
	pthread_mutex_unlock(&cq->mutex);
	gx_ring_free(c->hdr, c->ents);
	free(c);
	return 0;
}

// ibv_resize_cq moves the queued completions to a new ring, with the pollers held off.
int ibv_resize_cq(struct ibv_cq *cq, int cqe) {
	if (gx_forked_child())
		return EOPNOTSUPP;
	if (cqe < 1 || cqe > GX_MAX_CQE)
		return EINVAL;
	struct gx_cq *c = (struct gx_cq *)cq;
	struct gx_ring_header *hdr;
	struct gx_ring_entry *ents;
	int rc = gx_ring_alloc((uint32_t)cqe, &hdr, &ents);
	if (rc)
		return rc;
	pthread_mutex_lock(&c->poll_mu);
	gx_signals_onstack();
	rc = gx_resize_cq(cq, cqe, hdr, ents);
	if (!rc) {
		struct gx_ring_header *oh = c->hdr;
		struct gx_ring_entry *oe = c->ents;
		c->hdr = hdr;
		c->ents = ents;
		c->n = (uint32_t)cqe;
		hdr = oh;
		ents = oe;
	}
	pthread_mutex_unlock(&c->poll_mu);
	gx_ring_free(hdr, ents);
	return rc;
}

// read_record reads one record of len bytes from the pipe fd, which the Go side writes whole (a
// write of at most PIPE_BUF bytes is never split); it fails with read's errno, EAGAIN when fd is
// non-blocking and empty, or EIO at the end of the pipe (the device closed).
static int read_record(int fd, void *rec, size_t len) {
	size_t got = 0;
	while (got < len) {
		ssize_t n = read(fd, (char *)rec + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && got > 0 && errno == EAGAIN)
			continue; // the rest of a record is there
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

// ibv_get_cq_event blocks in C, in poll(2) on the channel and the device's sockets (compwait.c)
// and then read(2): both are cancellation points for pthread_cancel, and a channel whose fd the
// program made non-blocking returns EAGAIN.
int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context) {
	struct gx_comp_channel *g = (struct gx_comp_channel *)channel;
	for (;;) {
		gx_wait_comp_event(channel);
		uint64_t handle;
		if (read_record(channel->fd, &handle, sizeof(handle)) < 0)
			return -1;
		pthread_mutex_lock(&g->mu);
		struct gx_cq *c = g->cqs;
		while (c && ibv_cq_ex_to_cq(&c->ex)->handle != handle)
			c = c->chan_next;
		if (c) {
			struct ibv_cq *found = ibv_cq_ex_to_cq(&c->ex);
			pthread_mutex_lock(&found->mutex);
			c->events_reported++;
			pthread_mutex_unlock(&found->mutex);
			*cq = found;
			*cq_context = found->cq_context;
		}
		pthread_mutex_unlock(&g->mu);
		if (c)
			return 0;
		// the event of a CQ destroyed since: the next record, or EAGAIN
	}
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents) {
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}


// Queue pairs.

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr) {
	if (!pd || !attr)
		return fail_null(EINVAL);
	struct ibv_qp *qp = calloc(1, sizeof(struct gx_qp_ex));
	if (!qp)
		return fail_null(ENOMEM);
	qp->context = pd->context;
	qp->qp_context = attr->qp_context;
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->qp_type = attr->qp_type;
	qp->state = IBV_QPS_RESET;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	int rc = GX_CALL(gx_create_qp(qp, attr));
	if (rc) {
		free(qp);
		return fail_null(rc);
	}
	struct gx_qp_ex *q = (struct gx_qp_ex *)qp;
	q->cap = attr->cap;
	q->bell = GX_BELL_SEND;
	gx_wq_init(&q->sq, attr->cap.max_send_wr);
	gx_wq_init(&q->rq, attr->srq ? 0 : attr->cap.max_recv_wr);
	if ((rc = gx_post_rings_alloc(q)) || (rc = gx_qp_added(q))) {
		ibv_destroy_qp(qp);
		return fail_null(rc);
	}
	return qp;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask) {
	int rc = GX_CALL(gx_modify_qp(qp, attr, attr_mask));
	if (!rc && (attr_mask & IBV_QP_STATE)) {
		qp->state = attr->qp_state;
		if (attr->qp_state == IBV_QPS_RESET)
			gx_qp_reset((struct gx_qp_ex *)qp);
	}
	return rc;
}

int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask, struct ibv_qp_init_attr *init_attr) {
	int rc = GX_CALL(gx_query_qp(qp, attr, init_attr));
	if (rc)
		return rc;
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	init_attr->qp_type = qp->qp_type;
	qp->state = attr->qp_state;
	(void)attr_mask; // every attribute is reported, as providers do
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *qp) {
	int rc = GX_CALL(gx_destroy_qp(qp));
	if (!rc) {
		gx_qp_removed((struct gx_qp_ex *)qp);
		gx_post_rings_free((struct gx_qp_ex *)qp);
		gx_free_qp_ex((struct gx_qp_ex *)qp);
		free(qp);
	}
	return rc;
}

// Shared receive queues.

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr) {
	if (!pd || !attr)
		return fail_null(EINVAL);
	struct gx_srq *g = calloc(1, sizeof(*g));
	if (!g)
		return fail_null(ENOMEM);
	struct ibv_srq *srq = &g->srq;
	srq->context = pd->context;
	srq->srq_context = attr->srq_context;
	srq->pd = pd;
	pthread_mutex_init(&srq->mutex, NULL);
	pthread_cond_init(&srq->cond, NULL);
	// The SRQ's feeder reads the ring only once a post moved its tail, after this returns.
	int rc = GX_CALL(gx_create_srq(srq, &attr->attr));
	if (!rc && (rc = gx_srq_ring_alloc(g, attr->attr.max_wr, attr->attr.max_sge)))
		gx_destroy_srq(srq);
	if (rc) {
		free(g);
		return fail_null(rc);
	}
	gx_wq_init(&g->wq, attr->attr.max_wr);
	return srq;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int attr_mask) {
	int rc = GX_CALL(gx_modify_srq(srq, attr, attr_mask));
	struct ibv_srq_attr now;
	if (!rc && (attr_mask & IBV_SRQ_MAX_WR) && !gx_query_srq(srq, &now)) {
		struct gx_wq *wq = &((struct gx_srq *)srq)->wq;
		pthread_mutex_lock(&wq->mu);
		wq->depth = now.max_wr;
		pthread_mutex_unlock(&wq->mu);
	}
	return rc;
}

int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr) { return GX_CALL(gx_query_srq(srq, attr)); }

int ibv_destroy_srq(struct ibv_srq *srq) {
	int rc = GX_CALL(gx_destroy_srq(srq));
	if (!rc) {
		gx_srq_ring_free((struct gx_srq *)srq);
		free(srq);
	}
	return rc;
}

// Address handles.

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr) {
	if (!pd || !attr)
		return fail_null(EINVAL);
	struct ibv_ah *ah = calloc(1, sizeof(*ah));
	if (!ah)
		return fail_null(ENOMEM);
	ah->context = pd->context;
	ah->pd = pd;
	int rc = GX_CALL(gx_create_ah(ah, attr));
	if (rc) {
		free(ah);
		return fail_null(rc);
	}
	return ah;
}

int ibv_destroy_ah(struct ibv_ah *ah) {
	int rc = GX_CALL(gx_destroy_ah(ah));
	if (!rc)
		free(ah);
	return rc;
}

// Multicast.

int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid) {
	return GX_CALL(gx_mcast(qp, (uint8_t *)gid->raw, 1));
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid) {
	return GX_CALL(gx_mcast(qp, (uint8_t *)gid->raw, 0));
}

// Asynchronous events: 16-byte records (element, event type) the Go side writes to the
// context's pipe, read here so the wait happens in C.
int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event) {
	struct {
		uint64_t element;
		uint32_t type;
		uint32_t reserved;
	} rec;
	if (read_record(context->async_fd, &rec, sizeof(rec)) < 0)
		return -1;
	event->event_type = rec.type;
	switch (rec.type) {
	case IBV_EVENT_CQ_ERR:
		event->element.cq = (struct ibv_cq *)(uintptr_t)rec.element;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		event->element.srq = (struct ibv_srq *)(uintptr_t)rec.element;
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		event->element.qp = (struct ibv_qp *)(uintptr_t)rec.element;
		break;
	default:
		event->element.port_num = (int)rec.element;
	}
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *event) { (void)event; }
