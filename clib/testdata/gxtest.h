// What the C test programs share: CHECK, opening the device, a bounded busy poll, and moving an RC
// QP through INIT, RTR and RTS to a peer of the same device (GID index 1, the IPv4 address).
#ifndef GXTEST_H
#define GXTEST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

// CHECK names the failed check, with errno, and exits 1.
#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "line %d: check failed: %s (errno %d: %s)\n", __LINE__, \
				#cond, errno, strerror(errno));                               \
			exit(1);                                                             \
		}                                                                            \
	} while (0)

enum { GID_INDEX = 1 };

// wait_wc busy-polls cq for one completion, for at most five seconds.
static inline struct ibv_wc wait_wc(struct ibv_cq *cq) {
	struct ibv_wc wc;
	time_t end = time(NULL) + 5;
	int n;
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		CHECK(time(NULL) < end);
	CHECK(n == 1);
	return wc;
}

// poll_one is wait_wc for a completion that must have succeeded.
static inline struct ibv_wc poll_one(struct ibv_cq *cq) {
	struct ibv_wc wc = wait_wc(cq);
	CHECK(wc.status == IBV_WC_SUCCESS);
	return wc;
}

// open_only_device opens the one device the library lists (the program's GORXE_ADDR) and reads
// its IPv4 GID into gid.
static inline struct ibv_context *open_only_device(union ibv_gid *gid) {
	int num = 0;
	struct ibv_device **list = ibv_get_device_list(&num);
	CHECK(list && num == 1);
	struct ibv_context *ctx = ibv_open_device(list[0]);
	CHECK(ctx);
	ibv_free_device_list(list);
	CHECK(ibv_query_gid(ctx, 1, GID_INDEX, gid) == 0);
	return ctx;
}

// connect_rc moves qp to RTS, connected to QP dest_qpn at gid, with path MTU mtu and remote
// rights access; one RDMA READ or atomic may be outstanding each way.
static inline void connect_rc(struct ibv_qp *qp, uint32_t dest_qpn, const union ibv_gid *gid, enum ibv_mtu mtu,
			      int access) {
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = access};
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
	CHECK(qp->state == IBV_QPS_INIT);
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = mtu, .dest_qp_num = dest_qpn,
				 .max_dest_rd_atomic = 1, .min_rnr_timer = 12};
	a.ah_attr = (struct ibv_ah_attr){.is_global = 1, .port_num = 1};
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = GID_INDEX;
	a.ah_attr.grh.hop_limit = 1;
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == 0);
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				 .max_rd_atomic = 1};
	CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
					   IBV_QP_MAX_QP_RD_ATOMIC) == 0);
	CHECK(qp->state == IBV_QPS_RTS);
}

#endif
