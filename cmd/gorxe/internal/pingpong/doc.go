// Package pingpong implements gorxe's peers of rdma-core's ibv_rc_pingpong, ibv_uc_pingpong,
// ibv_ud_pingpong and ibv_srq_pingpong: the same options, TCP out-of-band exchange, queue pair
// parameters, traffic and output, so either side of a run can be the C tool on kernel rxe or a NIC.
package pingpong
