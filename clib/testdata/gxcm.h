// What the librdmacm test programs share beyond gxtest.h: their one event channel, and waiting
// for its next event.
#ifndef GXCM_H
#define GXCM_H

#include <poll.h>
#include <rdma/rdma_cma.h>

#include "gxtest.h"

static struct rdma_event_channel *ch;

// next waits (poll on the fd, 20 s at most) for the channel's next event and requires its type,
// its status and, unless id is NULL, its id.
static inline struct rdma_cm_event *next(enum rdma_cm_event_type want, int status, struct rdma_cm_id *id) {
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	CHECK(poll(&p, 1, 20000) == 1);
	struct rdma_cm_event *e;
	CHECK(rdma_get_cm_event(ch, &e) == 0);
	if (e->event != want || e->status != status || (id && e->id != id)) {
		fprintf(stderr, "event %s status %d, want %s status %d\n", rdma_event_str(e->event), e->status,
			rdma_event_str(want), status);
		exit(1);
	}
	return e;
}

// ack_next is next for an event the program only acknowledges.
static inline void ack_next(enum rdma_cm_event_type want, int status, struct rdma_cm_id *id) {
	CHECK(rdma_ack_cm_event(next(want, status, id)) == 0);
}

#endif
