//go:build gorxe_clib

// Importing a context, PD and MR (ibv_import_device, ibv_import_pd, ibv_import_mr). On rdma-core a
// dup of a context's cmd_fd reaches the same kernel file, whose objects any context on it can
// name by handle; here a dup of cmd_fd names the context's device and its objects in this
// process, and an imported PD or MR is a second handle on the same gorxe object.

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "clib.h"
#include "_cgo_export.h"

struct ibv_context *ibv_import_device(int cmd_fd) {
	struct ibv_device *device = NULL;
	int rc = GX_CALL(gx_import_device(cmd_fd, &device));
	if (rc) {
		errno = rc;
		return NULL;
	}
	struct ibv_context *ctx = ibv_open_device(device);
	if (!ctx)
		return NULL;
	// The context owns cmd_fd from now on (ibv_close_device closes it), and shares its file.
	close(ctx->cmd_fd);
	ctx->cmd_fd = cmd_fd;
	return ctx;
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle) {
	struct ibv_pd *pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->context = context;
	pd->handle = pd_handle;
	int rc = GX_CALL(gx_import_pd(pd));
	if (rc) {
		free(pd);
		errno = rc;
		return NULL;
	}
	return pd;
}

void ibv_unimport_pd(struct ibv_pd *pd) {
	if (pd && GX_CALL(gx_unimport_pd(pd)) == 0)
		free(pd);
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle) {
	struct ibv_mr *mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	mr->context = pd->context;
	mr->pd = pd;
	mr->handle = mr_handle;
	int rc = GX_CALL(gx_import_mr(mr));
	if (rc) {
		free(mr);
		errno = rc;
		return NULL;
	}
	return mr;
}

void ibv_unimport_mr(struct ibv_mr *mr) {
	if (mr && GX_CALL(gx_unimport_mr(mr)) == 0)
		free(mr);
}
