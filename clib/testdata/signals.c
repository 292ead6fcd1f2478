// A verbs program whose SIGALRM handler is installed without SA_ONSTACK, as perftest's timed runs
// install theirs, and fires every 50 µs while two RC QPs of one device exchange messages; halfway,
// it installs a second handler, also without SA_ONSTACK. Every call of a handler must run on one of
// the program's own threads, and there on the thread's own stack or its alternate signal stack:
// on a thread of the library's Go runtime it would run on a goroutine's stack, and so would it on
// the main thread while that runs Go code in an empty poll or a post's kick, unless the library
// gave the handler SA_ONSTACK. Each of the runtime's threads must block the signal, the main
// thread keep the mask it had, and the disposition stay the program's latest handler, with
// SA_ONSTACK. It prints "ok" and exits 0, or names the failed check and exits 1.

#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "gxtest.h"

enum { MSG = 64, ROUNDS = 3000 };

static volatile sig_atomic_t calls, later_calls, foreign, off_stack;
static pid_t main_tid;
static uintptr_t main_top; // an address near the top of the main thread's own stack

static void on_alarm(int sig) {
	(void)sig;
	calls++;
	if (gettid() != main_tid) {
		foreign++;
		return;
	}
	// On the main thread's stack (at most 8 MiB below its top) or its alternate signal stack,
	// not on a goroutine's.
	uintptr_t here = (uintptr_t)&sig;
	if (here <= main_top && main_top - here <= (8u << 20))
		return;
	stack_t alt;
	if (sigaltstack(NULL, &alt) == 0 && !(alt.ss_flags & SS_DISABLE) && here >= (uintptr_t)alt.ss_sp &&
	    here < (uintptr_t)alt.ss_sp + alt.ss_size)
		return;
	off_stack++;
}

static void on_alarm_later(int sig) {
	later_calls++;
	on_alarm(sig);
}

// blocks_alarm reports whether thread tid blocks SIGALRM, from its SigBlk line.
static int blocks_alarm(const char *tid) {
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/self/task/%s/status", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1; // the thread is gone
	unsigned long long mask = 0;
	int found = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "SigBlk: %llx", &mask) == 1)
			found = 1;
	fclose(f);
	CHECK(found);
	return (mask >> (SIGALRM - 1)) & 1;
}

// install_later replaces the handler, with the timer stopped, and polls until the library has
// given the new handler SA_ONSTACK (it looks every 10 ms at most; a signal taken in Go code before
// then would still run on a goroutine's stack, as the README says).
static void install_later(struct sigaction *sa, struct ibv_cq *cq) {
	struct itimerval off = {0}, every = {.it_interval = {.tv_usec = 50}, .it_value = {.tv_usec = 50}};
	CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0);
	sa->sa_handler = on_alarm_later;
	CHECK(sigaction(SIGALRM, sa, NULL) == 0);
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct sigaction cur;
		CHECK(sigaction(SIGALRM, NULL, &cur) == 0);
		CHECK(cur.sa_handler == on_alarm_later);
		if (cur.sa_flags & SA_ONSTACK)
			break;
		struct ibv_wc wc;
		CHECK(ibv_poll_cq(cq, 1, &wc) == 0);
		clock_gettime(CLOCK_MONOTONIC, &now);
		CHECK(now.tv_sec - start.tv_sec < 10);
	}
	CHECK(setitimer(ITIMER_REAL, &every, NULL) == 0);
}

int main(void) {
	main_tid = gettid();
	int top;
	main_top = (uintptr_t)&top;
	struct sigaction sa = {.sa_handler = on_alarm}; // no SA_ONSTACK
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);

	union ibv_gid gid;
	struct ibv_context *ctx = open_only_device(&gid);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *buf = calloc(2, MSG);
	CHECK(pd && buf);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 2 * MSG, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq *acq = ibv_create_cq(ctx, 8, NULL, NULL, 0), *bcq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	CHECK(mr && acq && bcq);
	struct ibv_qp_init_attr ia = {.send_cq = acq, .recv_cq = acq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *a = ibv_create_qp(pd, &ia);
	ia.send_cq = ia.recv_cq = bcq;
	struct ibv_qp *b = ibv_create_qp(pd, &ia);
	CHECK(a && b);
	connect_rc(a, b->qp_num, &gid, IBV_MTU_1024, 0);
	connect_rc(b, a->qp_num, &gid, IBV_MTU_1024, 0);

	struct itimerval every = {.it_interval = {.tv_usec = 50}, .it_value = {.tv_usec = 50}};
	CHECK(setitimer(ITIMER_REAL, &every, NULL) == 0);
	struct ibv_sge ssge = {.addr = (uintptr_t)buf, .length = MSG, .lkey = mr->lkey};
	struct ibv_sge rsge = {.addr = (uintptr_t)buf + MSG, .length = MSG, .lkey = mr->lkey};
	for (int i = 0; i < ROUNDS; i++) {
		if (i == ROUNDS / 2)
			install_later(&sa, acq);
		struct ibv_recv_wr rwr = {.wr_id = i, .sg_list = &rsge, .num_sge = 1}, *rbad;
		CHECK(ibv_post_recv(b, &rwr, &rbad) == 0);
		struct ibv_send_wr swr = {.wr_id = i, .sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED},
				   *sbad;
		CHECK(ibv_post_send(a, &swr, &sbad) == 0);
		// The timer interrupts the polls' system calls; a poll simply goes round again.
		CHECK(poll_one(acq).wr_id == (uint64_t)i);
		CHECK(poll_one(bcq).wr_id == (uint64_t)i);
	}
	struct itimerval off = {0};
	CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0);
	CHECK(calls > 0 && later_calls > 0);
	CHECK(foreign == 0);
	CHECK(off_stack == 0);
	struct sigaction now;
	CHECK(sigaction(SIGALRM, NULL, &now) == 0);
	CHECK(now.sa_handler == on_alarm_later);
	CHECK(now.sa_flags & SA_ONSTACK);

	// Every thread but the main one is the runtime's (the program starts none).
	char self[32];
	snprintf(self, sizeof self, "%d", main_tid);
	CHECK(blocks_alarm(self) == 0);
	DIR *d = opendir("/proc/self/task");
	CHECK(d);
	int others = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, self) == 0)
			continue;
		int b = blocks_alarm(e->d_name);
		CHECK(b != 0);
		others += b == 1;
	}
	closedir(d);
	CHECK(others > 0);

	CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0);
	CHECK(ibv_destroy_cq(acq) == 0 && ibv_destroy_cq(bcq) == 0);
	CHECK(ibv_dereg_mr(mr) == 0 && ibv_dealloc_pd(pd) == 0 && ibv_close_device(ctx) == 0);
	printf("ok\n");
	return 0;
}
