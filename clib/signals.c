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
// A program's thread that calls into Go runs Go code on a goroutine's stack too, and a handler
// without SA_ONSTACK would run there if its signal came meanwhile. Go asks C code that shares a
// process with it to install handlers with SA_ONSTACK; the library does it for the program: before
// calls into Go (the data path's empty polls and kicks, and the verbs that return an errno), it
// looks at the dispositions (at most every ONSTACK_TTL_NS) and adds SA_ONSTACK to each handler
// that lacks it. Such a handler then runs on the thread's alternate stack, which the runtime gives
// every thread that calls into Go (or the program's own, if it set one), and where no alternate
// stack is set, on the stack it interrupts, as before. Nothing else about the handler changes.

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
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

// A program installs its handlers long before their signals come; one that installs a handler
// without SA_ONSTACK and takes its signal within this time, inside a call into Go, is not covered.
#define ONSTACK_TTL_NS 10000000ull

static uint64_t handlers_checked; // CLOCK_MONOTONIC ns of the last look, 0 for never

// mono_ns reads the coarse monotonic clock: its resolution (a scheduler tick) is far finer than
// ONSTACK_TTL_NS, and it costs a fraction of the precise clock, which matters to an empty poll.
static uint64_t mono_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int needs_onstack(const struct sigaction *sa) {
	int handled = (sa->sa_flags & SA_SIGINFO) || (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN);
	return handled && !(sa->sa_flags & SA_ONSTACK);
}

static int same_action(const struct sigaction *a, const struct sigaction *b) {
	return a->sa_handler == b->sa_handler && a->sa_flags == b->sa_flags &&
	       memcmp(&a->sa_mask, &b->sa_mask, sizeof a->sa_mask) == 0;
}

// onstack adds SA_ONSTACK to sig's handler. Reading and writing a disposition are two calls, and
// a thread of the program may install another handler in between: the write returns what it
// replaced, and if that is not what was read, the program's newer handler goes back at once (with
// SA_ONSTACK added in turn), so the program's own choice is never lost.
static void onstack(int sig) {
	struct sigaction cur = {0}; // glibc fills only the kernel's part of sa_mask, which same_action compares whole
	if (sigaction(sig, NULL, &cur) != 0 || !needs_onstack(&cur))
		return;
	for (int tries = 0; tries < 8; tries++) {
		struct sigaction want = cur, replaced = {0};
		if (needs_onstack(&want))
			want.sa_flags |= SA_ONSTACK;
		if (sigaction(sig, &want, &replaced) != 0 || same_action(&replaced, &cur))
			return;
		cur = replaced;
	}
}

void gx_signals_onstack(void) {
	uint64_t now = mono_ns(), last = __atomic_load_n(&handlers_checked, __ATOMIC_RELAXED);
	if (last != 0 && now - last < ONSTACK_TTL_NS)
		return;
	__atomic_store_n(&handlers_checked, now, __ATOMIC_RELAXED);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&program_signals, sig))
			onstack(sig);
}
