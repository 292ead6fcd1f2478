//go:build gorxe_clib

// libibverbs' private ABI (the IBVERBS_PRIVATE_<N> node), which providers such as libmlx5 and
// libefa import. Programs like perftest load those providers, so every name must exist; gorxe
// loads no provider, so registering a driver is accepted and ignored and every command fails with
// EOPNOTSUPP. The installed headers do not declare these functions: the signatures here only
// need the right kind of return value.

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#ifndef GORXE_PABI
#error "GORXE_PABI (libibverbs' private ABI number) is set by make clib"
#endif

#define GX_CAT2(a, b) a##b
#define GX_CAT(a, b) GX_CAT2(a, b)

// Providers register from an ELF constructor (libmlx5's runs when perftest loads).
void GX_CAT(verbs_register_driver_, GORXE_PABI)(const void *ops) {}

bool verbs_allow_disassociate_destroy;

void __verbs_log(void *ctx, unsigned int level, const char *fmt, ...) {}
void verbs_uninit_context(void *ctx) {}
void verbs_set_ops(void *ctx, const void *ops) {}
void verbs_init_cq(void *cq, void *ctx, void *channel, void *cq_context) {}
unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, void *link) { return num_attrs; }

void *_verbs_init_and_alloc_context(void *device, int cmd_fd, size_t alloc_size, void *context_offset,
				    unsigned int driver_id) {
	errno = EOPNOTSUPP;
	return NULL;
}

void *verbs_open_device(void *device, void *private_data) {
	errno = EOPNOTSUPP;
	return NULL;
}

int ibv_read_ibdev_sysfs_file(char *buf, size_t size, void *sysfs_dev, const char *fnfmt, ...) {
	errno = EOPNOTSUPP;
	return -1;
}

#define UNSUPPORTED(name) \
	int name(void) { return EOPNOTSUPP; }

UNSUPPORTED(execute_ioctl)
UNSUPPORTED(ibv_cmd_advise_mr)
UNSUPPORTED(ibv_cmd_alloc_dm)
UNSUPPORTED(ibv_cmd_alloc_mw)
UNSUPPORTED(ibv_cmd_alloc_pd)
UNSUPPORTED(ibv_cmd_attach_mcast)
UNSUPPORTED(ibv_cmd_close_xrcd)
UNSUPPORTED(ibv_cmd_create_ah)
UNSUPPORTED(ibv_cmd_create_counters)
UNSUPPORTED(ibv_cmd_create_cq)
UNSUPPORTED(ibv_cmd_create_cq_ex)
UNSUPPORTED(ibv_cmd_create_flow)
UNSUPPORTED(ibv_cmd_create_flow_action_esp)
UNSUPPORTED(ibv_cmd_create_qp)
UNSUPPORTED(ibv_cmd_create_qp_ex)
UNSUPPORTED(ibv_cmd_create_qp_ex2)
UNSUPPORTED(ibv_cmd_create_rwq_ind_table)
UNSUPPORTED(ibv_cmd_create_srq)
UNSUPPORTED(ibv_cmd_create_srq_ex)
UNSUPPORTED(ibv_cmd_create_wq)
UNSUPPORTED(ibv_cmd_dealloc_mw)
UNSUPPORTED(ibv_cmd_dealloc_pd)
UNSUPPORTED(ibv_cmd_dereg_mr)
UNSUPPORTED(ibv_cmd_destroy_ah)
UNSUPPORTED(ibv_cmd_destroy_counters)
UNSUPPORTED(ibv_cmd_destroy_cq)
UNSUPPORTED(ibv_cmd_destroy_flow)
UNSUPPORTED(ibv_cmd_destroy_flow_action)
UNSUPPORTED(ibv_cmd_destroy_qp)
UNSUPPORTED(ibv_cmd_destroy_rwq_ind_table)
UNSUPPORTED(ibv_cmd_destroy_srq)
UNSUPPORTED(ibv_cmd_destroy_wq)
UNSUPPORTED(ibv_cmd_detach_mcast)
UNSUPPORTED(ibv_cmd_free_dm)
UNSUPPORTED(ibv_cmd_get_context)
UNSUPPORTED(ibv_cmd_modify_cq)
UNSUPPORTED(ibv_cmd_modify_flow_action_esp)
UNSUPPORTED(ibv_cmd_modify_qp)
UNSUPPORTED(ibv_cmd_modify_qp_ex)
UNSUPPORTED(ibv_cmd_modify_srq)
UNSUPPORTED(ibv_cmd_modify_wq)
UNSUPPORTED(ibv_cmd_open_qp)
UNSUPPORTED(ibv_cmd_open_xrcd)
UNSUPPORTED(ibv_cmd_poll_cq)
UNSUPPORTED(ibv_cmd_post_recv)
UNSUPPORTED(ibv_cmd_post_send)
UNSUPPORTED(ibv_cmd_post_srq_recv)
UNSUPPORTED(ibv_cmd_query_context)
UNSUPPORTED(ibv_cmd_query_device_any)
UNSUPPORTED(ibv_cmd_query_mr)
UNSUPPORTED(ibv_cmd_query_port)
UNSUPPORTED(ibv_cmd_query_qp)
UNSUPPORTED(ibv_cmd_query_srq)
UNSUPPORTED(ibv_cmd_read_counters)
UNSUPPORTED(ibv_cmd_reg_dm_mr)
UNSUPPORTED(ibv_cmd_reg_dmabuf_mr)
UNSUPPORTED(ibv_cmd_reg_mr)
UNSUPPORTED(ibv_cmd_req_notify_cq)
UNSUPPORTED(ibv_cmd_rereg_mr)
UNSUPPORTED(ibv_cmd_resize_cq)
