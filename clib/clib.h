// Internal declarations shared by the C files of gorxe's libibverbs.so.1 and the Go side.
#ifndef GORXE_CLIB_H
#define GORXE_CLIB_H

#include <stdint.h>
#include <infiniband/verbs.h>

// A send work request with its unions resolved, as the Go side reads it: C knows the QP type and
// the opcode, so it picks the union member, and Go sees plain fields.
struct gx_send_wr {
	uint64_t wr_id;
	struct ibv_sge *sg_list;
	int num_sge;
	uint32_t opcode;
	uint32_t send_flags;
	uint32_t imm;             // the immediate value in host order (imm_data is big-endian)
	uint32_t invalidate_rkey; // SEND_WITH_INV, LOCAL_INV
	uint32_t rkey;
	uint64_t remote_addr;
	uint64_t compare_add;
	uint64_t swap;
	struct ibv_ah *ah;        // UD
	uint32_t remote_qpn;
	uint32_t remote_qkey;
	uint32_t inline_len;      // IBV_SEND_INLINE: the payload gathered from sg_list
	uint8_t *inline_data;
};

// The most inline data one work request carries (the device's max_inline_data).
#define GX_MAX_INLINE 512

// A work completion without unions, as the Go side writes it; C copies it into struct ibv_wc.
struct gx_wc {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm;             // host order
	uint32_t invalidated_rkey;
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;
	uint16_t pkey_index;
	uint16_t slid;
	uint8_t sl;
	uint8_t dlid_path_bits;
};

// How many work requests or completions cross into Go per call.
#define GX_BATCH 32

// Every QP is allocated as a gx_qp_ex, so that ibv_qp_to_qp_ex can tell an extended QP (made by
// ibv_create_qp_ex) from a plain one; the ibv_wr_* calls build work requests here between
// wr_start and wr_complete, which posts them.
struct gx_qp_ex {
	struct ibv_qp_ex ex; // first: the program's ibv_qp and ibv_qp_ex are this address
	int extended;
	int err;                 // the first error since wr_start, reported by wr_complete
	int n, max_wr;           // work requests built, room for
	int max_sge, max_inline; // per work request
	struct ibv_send_wr *wrs;
	struct ibv_sge *sges;    // max_sge for each work request
	uint8_t *inl;            // max_inline bytes for each work request
};

// gx_create_qp_ex is the context's create_qp_ex; gx_free_qp_ex frees a QP's work request
// buffers.
struct ibv_qp *gx_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
void gx_free_qp_ex(struct gx_qp_ex *q);

// The name of the memfd behind each context's cmd_fd.
#define GX_CONTEXT_FILE "gorxe-context"

// gx_alloc_parent_domain is the context's alloc_parent_domain.
struct ibv_pd *gx_alloc_parent_domain(struct ibv_context *context, struct ibv_parent_domain_init_attr *attr);

// gx_forked_child reports, with a message and errno EOPNOTSUPP the first time, that this is a
// child of fork(), where the library's Go side cannot run.
int gx_forked_child(void);

// GX_CALL runs a call into Go that returns an errno, unless in a child of fork().
#define GX_CALL(call) (gx_forked_child() ? EOPNOTSUPP : (call))

// gx_set_errno sets the calling thread's errno; Go calls it on the caller's thread.
void gx_set_errno(int e);

#endif
