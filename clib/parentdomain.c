//go:build gorxe_clib

// Parent domains (ibv_alloc_parent_domain): a PD for every verb that takes one, standing for the
// PD it was made from. Its allocators are accepted and not called: no queue of gorxe's lives in
// memory the library allocates for the program, so the default allocation is all there is.

#include <errno.h>
#include <stdlib.h>

#include "clib.h"
#include "_cgo_export.h"

struct ibv_pd *gx_alloc_parent_domain(struct ibv_context *context, struct ibv_parent_domain_init_attr *attr) {
	// No thread domains exist (ibv_alloc_td is EOPNOTSUPP), so a td names nothing.
	if (!attr || !attr->pd || attr->td) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & ~(uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	struct ibv_pd *pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->context = context;
	int rc = GX_CALL(gx_parent_domain(pd, attr->pd));
	if (rc) {
		free(pd);
		errno = rc;
		return NULL;
	}
	return pd;
}
