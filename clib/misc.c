//go:build gorxe_clib

// The libibverbs functions that need no device (text of enums, rate conversions, sysfs reads,
// fork support), and those gorxe does not implement yet, which fail with EOPNOTSUPP as
// libibverbs does for a verb its provider lacks.

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clib.h"
#include "_cgo_export.h"

const char *ibv_wc_status_str(enum ibv_wc_status status) {
	return gx_forked_child() ? "unknown" : gx_wc_status_str(status);
}

const char *ibv_event_type_str(enum ibv_event_type event) {
	return gx_forked_child() ? "unknown" : gx_event_type_str(event);
}

const char *ibv_node_type_str(enum ibv_node_type node_type) {
	switch (node_type) {
	case IBV_NODE_CA:
		return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH:
		return "InfiniBand switch";
	case IBV_NODE_ROUTER:
		return "InfiniBand router";
	case IBV_NODE_RNIC:
		return "iWARP NIC";
	case IBV_NODE_USNIC:
		return "usNIC";
	case IBV_NODE_USNIC_UDP:
		return "usNIC UDP";
	case IBV_NODE_UNSPECIFIED:
		return "unspecified";
	default:
		return "unknown";
	}
}

const char *ibv_port_state_str(enum ibv_port_state port_state) {
	switch (port_state) {
	case IBV_PORT_NOP:
		return "PORT_NOP";
	case IBV_PORT_DOWN:
		return "PORT_DOWN";
	case IBV_PORT_INIT:
		return "PORT_INIT";
	case IBV_PORT_ARMED:
		return "PORT_ARMED";
	case IBV_PORT_ACTIVE:
		return "PORT_ACTIVE";
	case IBV_PORT_ACTIVE_DEFER:
		return "PORT_ACTIVE_DEFER";
	default:
		return "invalid state";
	}
}

// Static rates: each enum ibv_rate with its multiple of 2.5 Gb/s (0 where it is none) and its
// rate in Mb/s.
static const struct {
	enum ibv_rate rate;
	int mult;
	int mbps;
} rates[] = {
	{IBV_RATE_2_5_GBPS, 1, 2500},     {IBV_RATE_5_GBPS, 2, 5000},       {IBV_RATE_10_GBPS, 4, 10000},
	{IBV_RATE_20_GBPS, 8, 20000},     {IBV_RATE_30_GBPS, 12, 30000},    {IBV_RATE_40_GBPS, 16, 40000},
	{IBV_RATE_60_GBPS, 24, 60000},    {IBV_RATE_80_GBPS, 32, 80000},    {IBV_RATE_120_GBPS, 48, 120000},
	{IBV_RATE_14_GBPS, 0, 14062},     {IBV_RATE_56_GBPS, 0, 56250},     {IBV_RATE_112_GBPS, 0, 112500},
	{IBV_RATE_168_GBPS, 0, 168750},   {IBV_RATE_25_GBPS, 0, 25781},     {IBV_RATE_100_GBPS, 0, 103125},
	{IBV_RATE_200_GBPS, 0, 206250},   {IBV_RATE_300_GBPS, 0, 309375},   {IBV_RATE_28_GBPS, 0, 28125},
	{IBV_RATE_50_GBPS, 0, 53125},     {IBV_RATE_400_GBPS, 0, 425000},   {IBV_RATE_600_GBPS, 0, 637500},
};

#define NRATES (sizeof(rates) / sizeof(rates[0]))

int ibv_rate_to_mult(enum ibv_rate rate) {
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate && rates[i].mult)
			return rates[i].mult;
	return -1;
}

enum ibv_rate mult_to_ibv_rate(int mult) {
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].mult && rates[i].mult == mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

int ibv_rate_to_mbps(enum ibv_rate rate) {
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

enum ibv_rate mbps_to_ibv_rate(int mbps) {
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

// sysfs: gorxe devices have no sysfs entries; these read whatever the path holds, so a program
// that asks for a file of a gorxe device (ibv_devinfo's board_id) learns it is absent.

const char *ibv_get_sysfs_path(void) {
	const char *p = getenv("SYSFS_PATH");
	return p && *p ? p : "/sys";
}

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size) {
	char path[4096];
	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size);
	close(fd);
	if (n < 0)
		return -1;
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	else if ((size_t)n < size)
		buf[n] = '\0';
	return (int)n;
}

// Fork: gorxe registers memory without pinning pages, so nothing needs protecting from
// copy-on-write. A child of fork() cannot call into the library (its Go runtime does not survive
// fork); fork followed by exec works.

int ibv_fork_init(void) { return 0; }

enum ibv_fork_status ibv_is_fork_initialized(void) { return IBV_FORK_UNNEEDED; }

int ibv_dontfork_range(void *base, size_t size) { return 0; }

int ibv_dofork_range(void *base, size_t size) { return 0; }

// Kernel ABI conversions: gorxe has no kernel ABI; the destination is cleared.

void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src) {
	memset(dst, 0, sizeof(*dst));
}

void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src) {
	memset(dst, 0, sizeof(*dst));
}

struct ibv_sa_path_rec;
struct ib_user_path_rec;

void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src) {}

void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src) {}

// Not implemented yet: EOPNOTSUPP.

static void *unsupported_null(void) {
	errno = EOPNOTSUPP;
	return NULL;
}

// ibv_init_ah_from_wc answers a UD datagram: the address vector back to its sender, from the
// 40 bytes before the data. On RoCEv2 those hold the sender's IPv6 header, or 20 zero bytes and
// then its IPv4 header.
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc, struct ibv_grh *grh,
			struct ibv_ah_attr *ah_attr) {
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	const uint8_t *h = (const uint8_t *)grh;
	static const uint8_t zero[20];
	union ibv_gid from, to;
	if (memcmp(h, zero, sizeof(zero)) == 0 && (h[20] >> 4) == 4) {
		static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
		memcpy(from.raw, v4mapped, 12);
		memcpy(from.raw + 12, h + 20 + 12, 4);
		memcpy(to.raw, v4mapped, 12);
		memcpy(to.raw + 12, h + 20 + 16, 4);
		ah_attr->grh.traffic_class = h[21];
	} else {
		from = grh->sgid;
		to = grh->dgid;
		uint32_t v = be32toh(grh->version_tclass_flow);
		ah_attr->grh.traffic_class = (v >> 20) & 0xff;
		ah_attr->grh.flow_label = v & 0xfffff;
	}
	ah_attr->is_global = 1;
	ah_attr->grh.dgid = from;
	ah_attr->grh.hop_limit = 0xff;
	// The local GID index is the entry holding the address the datagram was sent to.
	for (int i = 0; i < 256; i++) {
		union ibv_gid g;
		if (ibv_query_gid(context, port_num, i, &g))
			break;
		if (memcmp(g.raw, to.raw, sizeof(g.raw)) == 0) {
			ah_attr->grh.sgid_index = (uint8_t)i;
			return 0;
		}
	}
	errno = ENOENT;
	return -1;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh, uint8_t port_num) {
	struct ibv_ah_attr attr;
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}

// ibv_rereg_mr keeps the region's keys, as rxe's and mlx5's do. Bad input is
// IBV_REREG_MR_ERR_INPUT, a refusal of the change IBV_REREG_MR_ERR_CMD, each with errno set.
int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access) {
	if (gx_forked_child())
		return IBV_REREG_MR_ERR_INPUT;
	if (!mr || flags <= 0 || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) || (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS)) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!addr || !length)) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && (!pd || pd->context != mr->context))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	gx_signals_onstack();
	int rc = gx_rereg_mr(mr, flags, pd, addr, length, (unsigned int)access);
	if (rc) {
		errno = rc;
		return IBV_REREG_MR_ERR_CMD;
	}
	return 0;
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
				 int access) {
	return unsupported_null();
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr, uint8_t eth_mac[6],
				uint16_t *vid) {
	return EOPNOTSUPP;
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle) { return unsupported_null(); }

void ibv_unimport_dm(struct ibv_dm *dm) {}

// ECE on a QP: rxe's provider implements neither call, so libibverbs answers with its generic
// EOPNOTSUPP (returned, not set in errno), after refusing a zero vendor ID in ibv_set_ece with
// errno EOPNOTSUPP as well. librdmacm takes EOPNOTSUPP as "the QP has no ECE" (see rdma_create_qp).
int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece) { return EOPNOTSUPP; }

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece) {
	if (!ece->vendor_id)
		errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags) { return 0; }
