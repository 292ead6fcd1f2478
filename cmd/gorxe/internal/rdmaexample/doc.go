// Package rdmaexample is gorxe's peer of librdmacm's example programs rdma_server and
// rdma_client: one RDMA-CM connection in RDMA-CM's TCP port space, one 16-byte inline SEND from
// the client, one back from the server, then both disconnect.
package rdmaexample
