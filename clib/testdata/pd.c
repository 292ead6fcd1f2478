// A program against the distribution's headers that shares PDs between contexts and objects.
// It imports a context from a dup of its cmd_fd, and a PD and an MR by handle (ibv_import_device,
// ibv_import_pd, ibv_import_mr): the imported objects name the same device, PD and region, a QP of
// the imported context on the imported PD sends from the imported MR, an fd or a handle that names
// nothing is EINVAL, and another process (this program run again with the fd) cannot import the
// context: EOPNOTSUPP. A parent domain (ibv_alloc_parent_domain) stands for its PD: the QP that
// receives is created on it and receives into an MR of the PD, and the PD is busy while the parent
// domain exists. It prints "ok" and exits 0, or names the failed check and exits 1.

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "gxtest.h"

enum { SIZE = 64 };

static struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq) {
	struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	CHECK(qp);
	return qp;
}

static void *default_alloc(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment, uint64_t type) {
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void default_free(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t type) {}

int main(int argc, char **argv) {
	if (argc == 2) { // the other process, given a dup of the first one's cmd_fd
		errno = 0;
		CHECK(!ibv_import_device(atoi(argv[1])) && errno == EOPNOTSUPP);
		return 0;
	}
	struct ibv_device **list = ibv_get_device_list(NULL);
	CHECK(list && list[0]);
	struct ibv_context *ctx = ibv_open_device(list[0]);
	struct ibv_context *other = ibv_open_device(list[0]); // a context of its own
	CHECK(ctx && other);
	ibv_free_device_list(list);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *buf = calloc(1, 2 * SIZE);
	CHECK(pd && buf);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 2 * SIZE, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr);

	int fd = dup(ctx->cmd_fd);
	CHECK(fd >= 0);
	struct ibv_context *imp = ibv_import_device(fd);
	CHECK(imp && imp != ctx && imp->device == ctx->device && imp->cmd_fd == fd);
	struct ibv_pd *ipd = ibv_import_pd(imp, pd->handle);
	CHECK(ipd && ipd != pd && ipd->handle == pd->handle && ipd->context == imp);
	struct ibv_mr *imr = ibv_import_mr(ipd, mr->handle);
	CHECK(imr && imr != mr && imr->handle == mr->handle && imr->pd == ipd && imr->context == imp);
	CHECK(imr->addr == mr->addr && imr->length == mr->length && imr->lkey == mr->lkey && imr->rkey == mr->rkey);

	// What names nothing: an fd that is no context's, handles of no object, and handles of
	// another context's file (a context opened on its own shares no objects).
	int null = open("/dev/null", O_RDWR);
	CHECK(null >= 0);
	errno = 0;
	CHECK(!ibv_import_device(null) && errno == EINVAL);
	errno = 0;
	CHECK(!ibv_import_pd(imp, pd->handle + 1000) && errno == EINVAL);
	errno = 0;
	CHECK(!ibv_import_pd(other, pd->handle) && errno == EINVAL);
	errno = 0;
	CHECK(!ibv_import_mr(ipd, mr->handle + 1000) && errno == EINVAL);
	struct ibv_pd *opd = ibv_alloc_pd(other);
	CHECK(opd);
	errno = 0;
	CHECK(!ibv_import_mr(opd, mr->handle) && errno == EINVAL);

	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		char arg[16];
		snprintf(arg, sizeof(arg), "%d", fd);
		execl("/proc/self/exe", argv[0], arg, (char *)NULL);
		_exit(127);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);

	// Parent domains: of a PD only, with known attributes.
	int pd_context;
	struct ibv_parent_domain_init_attr pda = {.pd = NULL};
	errno = 0;
	CHECK(!ibv_alloc_parent_domain(ctx, &pda) && errno == EINVAL);
	pda.pd = pd;
	pda.comp_mask = 1 << 5;
	errno = 0;
	CHECK(!ibv_alloc_parent_domain(ctx, &pda) && errno == EOPNOTSUPP);
	pda.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pda.alloc = default_alloc;
	pda.free = default_free;
	pda.pd_context = &pd_context;
	struct ibv_pd *pdom = ibv_alloc_parent_domain(ctx, &pda);
	CHECK(pdom && pdom != pd && pdom->context == ctx);
	pda.pd = pdom;
	errno = 0;
	CHECK(!ibv_alloc_parent_domain(ctx, &pda) && errno == EINVAL);
	CHECK(ibv_dealloc_pd(pd) == EBUSY);

	// A SEND from the imported MR, posted on a QP of the imported context and PD, lands in the
	// original MR through a QP of the original context, created on the parent domain.
	union ibv_gid gid;
	CHECK(ibv_query_gid(ctx, 1, GID_INDEX, &gid) == 0);
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_cq *icq = ibv_create_cq(imp, 8, NULL, NULL, 0);
	CHECK(cq && icq);
	struct ibv_qp *qp = rc_qp(pdom, cq), *iqp = rc_qp(ipd, icq);
	connect_rc(qp, iqp->qp_num, &gid, IBV_MTU_1024, 0);
	connect_rc(iqp, qp->qp_num, &gid, IBV_MTU_1024, 0);
	struct ibv_sge rsge = {.addr = (uintptr_t)buf + SIZE, .length = SIZE, .lkey = mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 1, .sg_list = &rsge, .num_sge = 1}, *bad_rwr;
	CHECK(ibv_post_recv(qp, &rwr, &bad_rwr) == 0);
	memcpy(buf, "imported", 9);
	struct ibv_sge ssge = {.addr = (uintptr_t)imr->addr, .length = 9, .lkey = imr->lkey};
	struct ibv_send_wr swr = {.wr_id = 2, .sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED}, *bad_swr;
	CHECK(ibv_post_send(iqp, &swr, &bad_swr) == 0);
	CHECK(poll_one(icq).wr_id == 2);
	struct ibv_wc wc = poll_one(cq);
	CHECK(wc.wr_id == 1 && wc.byte_len == 9 && strcmp(buf + SIZE, "imported") == 0);

	// Unimporting leaves the objects to their owner, which destroys them.
	CHECK(ibv_destroy_qp(iqp) == 0 && ibv_destroy_cq(icq) == 0);
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);
	CHECK(ibv_close_device(imp) == 0);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF); // the imported context owned it
	CHECK(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0 && ibv_dealloc_pd(pdom) == 0);
	CHECK(ibv_dereg_mr(mr) == 0 && ibv_dealloc_pd(pd) == 0 && ibv_dealloc_pd(opd) == 0);
	CHECK(ibv_close_device(ctx) == 0 && ibv_close_device(other) == 0);
	printf("ok\n");
	return 0;
}
