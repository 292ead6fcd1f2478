// Declarations shared by the C side of gorxe's librdmacm.so.1 (cm.c) and its Go side (rdmacm.go).
#ifndef GORXE_CM_H
#define GORXE_CM_H

#include <pthread.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>

// The most private data an event carries: a REJ's (148 bytes) or a REP's (196) area.
#define GX_CM_PDATA 224

// An event with room for its private data, queued on its channel until rdma_get_cm_event.
struct gx_cm_event {
	struct rdma_cm_event ev; // first: the program's pointer is this struct's
	struct gx_cm_event *next;
	int dead; // its id was destroyed before the program got it: dropped when dequeued
	uint8_t pdata[GX_CM_PDATA];
};

// An event channel. Its fd is an eventfd in semaphore mode counting the queued events, so it
// blocks, polls and honours O_NONBLOCK (EAGAIN) as librdmacm's does, the waiting happens in C,
// and, as with the kernel's fd, a thread blocked on it stays blocked when another destroys the
// channel (rping's event thread is still waiting when the program exits).
struct gx_channel {
	struct rdma_event_channel ch; // first
	pthread_mutex_t mu;
	struct gx_cm_event *head, *tail;
};

// An id with the library's own fields after the program's.
struct gx_id {
	struct rdma_cm_id id; // first
	pthread_mutex_t mu;    // guards unacked
	pthread_cond_t acked;  // signalled when unacked drops
	int unacked;           // events the program got and has not acked yet
	int sync;              // created without a channel: calls wait for their event
	// rdma_create_ep on a passive address: rdma_get_request creates each request's QP with them.
	int has_ep_attr;
	struct ibv_qp_init_attr ep_attr;
	struct ibv_pd *ep_pd;
	// what rdma_create_qp created for the program and rdma_destroy_qp destroys
	int own_send_cq, own_recv_cq;
	// the path rdma_resolve_route resolved (route.path_rec points here)
	struct ibv_sa_path_rec path;
	// Enhanced Connection Establishment, as librdmacm keeps it: local_ece is rdma_set_local_ece's
	// (replaced by the QP's when rdma_create_qp creates one), remote_ece the peer's, from the
	// REQ of a request's id or the REP of a connecting id.
	struct ibv_ece local_ece, remote_ece;
	// rdma_set_option
	int tos_set;
	uint8_t tos;
	uint8_t ack_timeout;
};

// gx_cm_post queues an event for id on id's channel, with conn's or ud's parameters (either may
// be NULL) and private data, and returns it (NULL without memory). Go calls it holding the lock
// that rdma_destroy_id's Go side takes, so id is alive.
struct rdma_cm_event *gx_cm_post(struct rdma_cm_id *id, struct rdma_cm_id *listen_id, int event, int status,
				 const void *pdata, int plen, struct rdma_conn_param *conn, struct rdma_ud_param *ud);

// gx_cm_post_mcast queues a MULTICAST_JOIN event whose private_data is the join's context, as
// librdmacm reports it.
void gx_cm_post_mcast(struct rdma_cm_id *id, struct rdma_ud_param *ud, void *context);

// gx_cm_child creates the id of a connection request on listen's channel.
struct rdma_cm_id *gx_cm_child(struct rdma_cm_id *listen);

// gx_cm_drop_events marks the events queued for id, which is being destroyed, as dead; Go calls
// it holding the lock gx_cm_post is called under.
void gx_cm_drop_events(struct rdma_cm_id *id);

// gx_cm_free_id frees an id the program never saw (a request whose listening id was destroyed).
void gx_cm_free_id(struct rdma_cm_id *id);

// gx_cm_unacked returns how many of id's events were not acked yet.
int gx_cm_unacked(struct rdma_cm_id *id);

// gx_handle_add records an id, channel or event handed to the program (0 without memory);
// gx_handle_del forgets it when it is freed; gx_handle_live says whether p is one of them.
int gx_handle_add(const void *p);
void gx_handle_del(const void *p);
int gx_handle_live(const void *p);

// gx_cm_context returns the library's i-th device context (librdmacm opens every device), or
// NULL past the last.
struct ibv_context *gx_cm_context(int i);

// gx_sockaddr reads an IPv4 or IPv6 address and port (host order) from sa; it returns the
// family, or 0 when sa is neither.
int gx_sockaddr(const struct sockaddr *sa, uint8_t ip[16], uint16_t *port, uint32_t *scope);

// gx_set_sockaddr writes an address (IPv4 when is4, from the last four bytes of ip) and port.
void gx_set_sockaddr(struct sockaddr_storage *sa, const uint8_t ip[16], int is4, uint16_t port, uint32_t scope);

#endif
