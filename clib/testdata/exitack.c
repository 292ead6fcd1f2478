// The answering side of a two-message exchange that ends without any teardown, as a short test
// program or one that bails out does: it receives a SEND, answers it, receives a second SEND and
// returns from main at once, its QP, CQs and device left open. Its peer (TestExitSendsHeldACKs, on
// gorxe's Go API) must still see that second SEND complete, as it would against a NIC, which
// acknowledges a message before its program even polls it.
//
// Usage: exitack PEER_IPV4. It prints its QP number on a line, reads the peer's from stdin, and
// prints "ready" once its receives are posted; both QPs start at PSN 0.
//
// exitack alarm: the program busy-polls an empty CQ of a device that bound its port until a
// SIGALRM handler calls exit(0), so that the library's exit handler runs on a thread that may be
// inside a call into Go; the process must still end at once, with status 0.
#include <arpa/inet.h>
#include <signal.h>
#include <sys/time.h>

#include "gxtest.h"

static void leave(int sig) {
	(void)sig;
	exit(0);
}

static int alarm_exit(void) {
	union ibv_gid own;
	struct ibv_context *ctx = open_only_device(&own);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	CHECK(cq);
	// A live QP: the library's exit handler calls into Go only for a program that has one.
	struct ibv_qp_init_attr init = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
					.cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	CHECK(ibv_create_qp(pd, &init));
	struct sigaction sa = {.sa_handler = leave, .sa_flags = SA_ONSTACK};
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	struct itimerval when = {.it_value = {.tv_usec = 20000}};
	CHECK(setitimer(ITIMER_REAL, &when, NULL) == 0);
	wait_wc(cq); // fails after five seconds; the handler ends the program long before
	return 1;
}

int main(int argc, char **argv) {
	CHECK(argc == 2);
	if (strcmp(argv[1], "alarm") == 0)
		return alarm_exit();
	union ibv_gid own, peer = {0};
	peer.raw[10] = peer.raw[11] = 0xff;
	CHECK(inet_pton(AF_INET, argv[1], &peer.raw[12]) == 1);

	struct ibv_context *ctx = open_only_device(&own);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	CHECK(pd);
	static char buf[3][64];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr);
	struct ibv_cq *scq = ibv_create_cq(ctx, 4, NULL, NULL, 0), *rcq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	CHECK(scq && rcq);
	struct ibv_qp_init_attr init = {.send_cq = scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
					.cap = {.max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);
	CHECK(qp);
	printf("%u\n", qp->qp_num);
	fflush(stdout);
	unsigned peer_qpn;
	CHECK(scanf("%u", &peer_qpn) == 1);
	connect_rc(qp, peer_qpn, &peer, IBV_MTU_1024, 0);
	for (int i = 0; i < 2; i++) {
		struct ibv_sge sge = {.addr = (uintptr_t)buf[i], .length = sizeof buf[i], .lkey = mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = i, .sg_list = &sge, .num_sge = 1}, *bad;
		CHECK(ibv_post_recv(qp, &wr, &bad) == 0);
	}
	printf("ready\n");
	fflush(stdout);

	CHECK(poll_one(rcq).wr_id == 0);
	struct ibv_sge sge = {.addr = (uintptr_t)buf[2], .length = sizeof buf[2], .lkey = mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED},
			   *bad;
	CHECK(ibv_post_send(qp, &wr, &bad) == 0);
	poll_one(scq);
	// The completion of the second SEND, then straight out: no verb after it.
	CHECK(poll_one(rcq).wr_id == 1);
	return 0;
}
