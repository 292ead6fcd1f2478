//go:build gorxe_clib

// The Go runtime's threads must not run the program's handlers of asynchronous signals.
//
// A program's handler installed without SA_ONSTACK (perftest's SIGALRM handler, which ends a
// timed run, is one) runs on the stack of whatever thread the kernel picks for a
// process-directed signal; picking one of the runtime's threads, it runs on a goroutine's small
// stack and corrupts it, and the program dies later with a Go traceback. So the library's
// threads block those signals, and the kernel always picks one of the program's own threads.
// The runtime's threads take the signal mask of the thread that loaded the library, as it was
// when the runtime started (from the library's constructor): a constructor that runs before the
// runtime's blocks the signals on the loading thread, and one that runs after it gives that
// thread its mask back. Signals the runtime needs on its threads stay unblocked: the synchronous
// ones (a fault in Go code), SIGURG (goroutine preemption) and SIGPIPE (a write to a closed pipe).
//
// A program's thread that calls into Go runs Go code on a goroutine's stack too, and a signal it
// takes meanwhile would run the program's handler there. The calls the data path makes at message
// rate and that run the engine (an empty poll running the network, the kick of an idle QP) hold
// the same signals for their duration (gx_signals_hold, gx_signals_release) when the program has
// a handler that needs it: a signal that arrives meanwhile waits the few microseconds until the
// call returns to C, where the handler runs on the program's stack. The other calls into Go are
// rare and brief, and stay exposed.

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>

#include "clib.h"

static sigset_t program_signals; // what the library's threads block, and its hot calls
static sigset_t program_mask;
static int blocked;

__attribute__((constructor(101))) static void gx_block_program_signals(void) {
	sigfillset(&program_signals);
	static const int runtime_needs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT, SIGURG, SIGPIPE};
	for (unsigned i = 0; i < sizeof(runtime_needs) / sizeof(runtime_needs[0]); i++)
		sigdelset(&program_signals, runtime_needs[i]);
	blocked = pthread_sigmask(SIG_BLOCK, &program_signals, &program_mask) == 0;
}

__attribute__((constructor)) static void gx_restore_program_signals(void) {
	if (blocked)
		pthread_sigmask(SIG_SETMASK, &program_mask, NULL);
}

// Holding costs two system calls per call into Go, about 0.4 µs here, which only a handler that
// would run on the interrupted stack makes worth paying: the dispositions are looked at again at
// most every HANDLERS_TTL_NS, and the calls hold the signals only while one of them is a
// handler installed without SA_ONSTACK (one with it runs on the thread's alternate stack, which
// the runtime gives a thread that calls into Go). A program installs its handlers long before
// their signals come; one that installs such a handler and takes its signal within that time,
// inside one of these calls, is not covered.
#define HANDLERS_TTL_NS 10000000ull

static uint64_t handlers_checked; // CLOCK_MONOTONIC ns of the last look, 0 for never
static int hold_needed;

static uint64_t mono_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

// handler_on_program_stack reports whether some held signal has a handler that would run on the
// stack the signal interrupts.
static int handler_on_program_stack(void) {
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (!sigismember(&program_signals, sig) || sigaction(sig, NULL, &sa) != 0)
			continue;
		int handled = (sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
		if (handled && !(sa.sa_flags & SA_ONSTACK))
			return 1;
	}
	return 0;
}

int gx_signals_hold(sigset_t *old) {
	uint64_t now = mono_ns(), last = __atomic_load_n(&handlers_checked, __ATOMIC_RELAXED);
	if (last == 0 || now - last >= HANDLERS_TTL_NS) {
		__atomic_store_n(&hold_needed, handler_on_program_stack(), __ATOMIC_RELAXED);
		__atomic_store_n(&handlers_checked, now, __ATOMIC_RELAXED);
	}
	if (!__atomic_load_n(&hold_needed, __ATOMIC_RELAXED))
		return 0;
	pthread_sigmask(SIG_BLOCK, &program_signals, old);
	return 1;
}

void gx_signals_release(int held, const sigset_t *old) {
	if (held)
		pthread_sigmask(SIG_SETMASK, old, NULL);
}
