//go:build gorxe_clib

// The part of librdmacm's interface gorxe does not implement yet (rdma_notify, rsockets),
// present so that programs linked against librdmacm.so.1 (a symlink to this library) load: every
// call fails with EOPNOTSUPP (-1 and errno, librdmacm's convention). The connection manager
// itself is in cm.c and cmep.c.

#include <errno.h>
#include <stdlib.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#include "clib.h"

#define FAIL              \
	do {              \
		errno = EOPNOTSUPP; \
		return -1;  \
	} while (0)

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event) { FAIL; }

const char *rdma_event_str(enum rdma_cm_event_type event) {
	switch (event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		return "RDMA_CM_EVENT_ADDR_RESOLVED";
	case RDMA_CM_EVENT_ADDR_ERROR:
		return "RDMA_CM_EVENT_ADDR_ERROR";
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		return "RDMA_CM_EVENT_ROUTE_RESOLVED";
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return "RDMA_CM_EVENT_ROUTE_ERROR";
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		return "RDMA_CM_EVENT_CONNECT_REQUEST";
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		return "RDMA_CM_EVENT_CONNECT_RESPONSE";
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return "RDMA_CM_EVENT_CONNECT_ERROR";
	case RDMA_CM_EVENT_UNREACHABLE:
		return "RDMA_CM_EVENT_UNREACHABLE";
	case RDMA_CM_EVENT_REJECTED:
		return "RDMA_CM_EVENT_REJECTED";
	case RDMA_CM_EVENT_ESTABLISHED:
		return "RDMA_CM_EVENT_ESTABLISHED";
	case RDMA_CM_EVENT_DISCONNECTED:
		return "RDMA_CM_EVENT_DISCONNECTED";
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return "RDMA_CM_EVENT_DEVICE_REMOVAL";
	case RDMA_CM_EVENT_MULTICAST_JOIN:
		return "RDMA_CM_EVENT_MULTICAST_JOIN";
	case RDMA_CM_EVENT_MULTICAST_ERROR:
		return "RDMA_CM_EVENT_MULTICAST_ERROR";
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return "RDMA_CM_EVENT_ADDR_CHANGE";
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return "RDMA_CM_EVENT_TIMEWAIT_EXIT";
	default:
		return "UNKNOWN EVENT";
	}
}

// rsockets.

int rsocket(int domain, int type, int protocol) { FAIL; }
int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen) { FAIL; }
int rlisten(int socket, int backlog) { FAIL; }
int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen) { FAIL; }
int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen) { FAIL; }
int rshutdown(int socket, int how) { FAIL; }
int rclose(int socket) { FAIL; }
ssize_t rrecv(int socket, void *buf, size_t len, int flags) { FAIL; }
ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
		  socklen_t *addrlen) { FAIL; }
ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags) { FAIL; }
ssize_t rsend(int socket, const void *buf, size_t len, int flags) { FAIL; }
ssize_t rsendto(int socket, const void *buf, size_t len, int flags, const struct sockaddr *dest_addr,
		socklen_t addrlen) { FAIL; }
ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags) { FAIL; }
ssize_t rread(int socket, void *buf, size_t count) { FAIL; }
ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt) { FAIL; }
ssize_t rwrite(int socket, const void *buf, size_t count) { FAIL; }
ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt) { FAIL; }
int rpoll(struct pollfd *fds, nfds_t nfds, int timeout) { FAIL; }
int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout) { FAIL; }
int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen) { FAIL; }
int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen) { FAIL; }
int rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen) { FAIL; }
int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen) { FAIL; }
int rfcntl(int socket, int cmd, ...) { FAIL; }
off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset) { FAIL; }
int riounmap(int socket, void *buf, size_t len) { FAIL; }
size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags) {
	errno = EOPNOTSUPP;
	return 0;
}
