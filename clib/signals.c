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

#include <pthread.h>
#include <signal.h>

static sigset_t program_mask;
static int blocked;

__attribute__((constructor(101))) static void gx_block_program_signals(void) {
	sigset_t set;
	sigfillset(&set);
	static const int runtime_needs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT, SIGURG, SIGPIPE};
	for (unsigned i = 0; i < sizeof(runtime_needs) / sizeof(runtime_needs[0]); i++)
		sigdelset(&set, runtime_needs[i]);
	blocked = pthread_sigmask(SIG_BLOCK, &set, &program_mask) == 0;
}

__attribute__((constructor)) static void gx_restore_program_signals(void) {
	if (blocked)
		pthread_sigmask(SIG_SETMASK, &program_mask, NULL);
}
