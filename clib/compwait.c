//go:build gorxe_clib

// A blocking ibv_get_cq_event waits for the device's sockets as well as for the channel's pipe,
// and runs what arrives on the sockets on the program's thread. The datagram that completes the
// program's work then wakes that thread, which turns it into the completion and the event itself,
// where otherwise the datagram would wake the receive goroutine's thread and that thread's event
// would wake the program's: one sleeping thread woken per message instead of two, each wake-up
// tens of µs on a virtual machine. The receive goroutine, finding the datagrams taken, leaves the
// network to the waiting thread for a while, as it does for a busy poller. A channel the program
// made non-blocking is only read: the program waits on its descriptor itself.

#include <errno.h>
#include <fcntl.h>
#include <poll.h>

#include "clib.h"
#include "_cgo_export.h"

enum { MAX_WAIT_SOCKETS = 16 };

void gx_wait_comp_event(struct ibv_comp_channel *ch) {
	if (gx_forked_child())
		return;
	int flags = fcntl(ch->fd, F_GETFL);
	if (flags < 0 || (flags & O_NONBLOCK))
		return;
	int socks[MAX_WAIT_SOCKETS];
	gx_signals_onstack();
	int n = gx_channel_fds(ch, socks, MAX_WAIT_SOCKETS);
	struct pollfd p[1 + MAX_WAIT_SOCKETS];
	while (n > 0) {
		p[0] = (struct pollfd){.fd = ch->fd, .events = POLLIN};
		for (int i = 0; i < n; i++)
			p[1 + i] = (struct pollfd){.fd = socks[i], .events = POLLIN};
		// A cancellation point, as the read it stands in for: pthread_cancel ends the wait here.
		if (poll(p, (nfds_t)n + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return; // the read reports the channel's state
		}
		if (p[0].revents)
			return;
		int gone = 0;
		for (int i = 0; i < n; i++)
			gone |= p[1 + i].revents & (POLLNVAL | POLLERR);
		gx_signals_onstack();
		if (gone) // a multicast group left, or the device closed
			n = gx_channel_fds(ch, socks, MAX_WAIT_SOCKETS);
		else
			gx_poll_channel(ch);
	}
}
