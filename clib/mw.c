//go:build gorxe_clib

// Memory windows: the context's alloc_mw, dealloc_mw and bind_mw ops, which the inline
// ibv_alloc_mw, ibv_dealloc_mw and ibv_bind_mw of the program's own code call. A type 1 bind
// is a BIND_MW work request posted through the context's post_send, as rxe's provider does, so it
// takes the send queue's order; type 2 windows are bound by the program's own BIND_MW work
// requests (ibv_post_send or ibv_wr_bind_mw).

#include <errno.h>
#include <stdlib.h>

#include "clib.h"
#include "_cgo_export.h"

struct ibv_mw *gx_alloc_mw_op(struct ibv_pd *pd, enum ibv_mw_type type) {
	struct ibv_mw *mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->type = type;
	int rc = GX_CALL(gx_alloc_mw(mw));
	if (rc) {
		free(mw);
		errno = rc;
		return NULL;
	}
	return mw;
}

int gx_dealloc_mw_op(struct ibv_mw *mw) {
	int rc = GX_CALL(gx_dealloc_mw(mw));
	if (!rc)
		free(mw);
	return rc;
}

// gx_bind_mw_op gives the window the next rkey of its index (ibv_inc_rkey) at once: the program
// reads it from mw->rkey, and it is valid once the bind completes successfully (libibverbs'
// contract; after a failed bind the program restores the old one). ibv_bind_mw checked the
// region's PD and that a bind without a region has no range; the op is also reachable directly,
// so the type is checked again.
int gx_bind_mw_op(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind) {
	// zero-based type 1 windows are refused (IBTA o10-36.2.2)
	if (mw->type != IBV_MW_TYPE_1 || (mw_bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED)) {
		errno = EINVAL;
		return EINVAL;
	}
	struct ibv_send_wr wr = {.wr_id = mw_bind->wr_id, .opcode = IBV_WR_BIND_MW, .send_flags = mw_bind->send_flags};
	struct ibv_send_wr *bad;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	int rc = qp->context->ops.post_send(qp, &wr, &bad);
	if (rc) {
		errno = rc;
		return rc;
	}
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
