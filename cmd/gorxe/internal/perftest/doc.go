// Package perftest runs gorxe's perftest-compatible benchmarks (ib_write_bw, ib_read_lat and the
// others): the perftest 6.x out-of-band protocol over TCP or RDMA-CM (-z, -R, which also connects
// the QPs through RDMA-CM), the traffic of each test and its report tables, so that a gorxe tool
// and a C perftest tool on kernel rxe or a RoCE NIC can test each other.
package perftest
