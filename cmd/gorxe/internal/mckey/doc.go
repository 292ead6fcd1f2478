// Package mckey is gorxe's peer of librdmacm's mckey: receivers join an IP multicast group
// through RDMA-CM and wait for a number of UD messages; a sender joins the same group and sends
// them, printing the C tool's progress lines. On RoCE the join is local (no subnet administrator):
// the group maps to its multicast GID, the QP is attached, and the host joins the IP group.
package mckey
