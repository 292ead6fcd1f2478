//go:build gorxe_clib

// At exit, the ACKs the library holds back go out.
//
// A poll that finds a message keeps the message's ACK back to follow the program's reply
// (internal/stack's ackhold.go). A program that returns from main or calls exit() right after its
// last poll, leaving its QPs to the process's end as it may with a kernel driver, would take that
// ACK with it, and its peer's last message, complete here, would end in RETRY_EXC_ERR there after
// its retransmissions. So the library's destructor, which exit() runs after the program's own
// atexit handlers and destructors, sends what the devices hold.
//
// It does so from a thread of its own and waits for it at most EXIT_WAIT_NS. The thread that
// exits may be in a signal handler that interrupted the library, inside a call into Go or holding
// a post ring's lock; calling into Go there could deadlock or crash the program, while another
// thread at worst waits for that lock, or for the runtime's one processor, which a call into Go
// interrupted by the handler keeps (procs.go), until the wait ends and the process with it: such
// an exit takes EXIT_WAIT_NS longer and leaves the ACKs unsent. _exit() and death by signal run no
// destructor: there too the ACKs stay unsent, as they would on a NIC whose host died before its
// ACK left.

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <time.h>

#include "clib.h"
#include "_cgo_export.h"

#define EXIT_WAIT_NS 100000000L

// live_qps counts the program's QPs. Destroying a QP sends what is held back, so a program that
// destroyed them all holds nothing, and its exit does not wait for the Go side. Such a wait gives
// the program's other threads longer to run into what its teardown already destroyed: the
// distribution's rping has its CM event thread read the event channel that main destroyed and
// fail the program, a race of rping's own (fixed in rdma-core 61) that the wait made common.
static int live_qps;

void gx_note_live_qps(int n) { __atomic_store_n(&live_qps, n, __ATOMIC_RELAXED); }

static sem_t sent;

static void *send_held(void *arg) {
	(void)arg;
	gx_send_held_acks();
	sem_post(&sent);
	return NULL;
}

__attribute__((destructor)) static void gx_exit_send_held(void) {
	pthread_attr_t attr;
	if (__atomic_load_n(&live_qps, __ATOMIC_RELAXED) == 0 || gx_is_forked_child() || sem_init(&sent, 0, 0) != 0 ||
	    pthread_attr_init(&attr) != 0)
		return;
	// The thread takes none of the program's signals, as the runtime's threads do not (signals.c).
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_t t;
	int started = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
		      pthread_create(&t, &attr, send_held, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (!started)
		return;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += EXIT_WAIT_NS;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (sem_timedwait(&sent, &until) != 0 && errno == EINTR) {
	}
}
