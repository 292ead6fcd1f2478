// Package soak runs gorxe as two processes over real UDP loopback sockets, with GORXE_FAULTS
// impairing the network, and checks that mixed RC traffic (SEND, RDMA WRITE, RDMA READ, atomics
// on several QPs) arrives byte for byte, with exactly one completion per work request posted. It
// uses only the public gorxe API. It is not part of `make test`: see `make soak-udp`.
//
// Environment: GORXE_SOAK_UDP=1 enables it; SOAK_BYTES (default 1 GiB) is the volume of a normal
// run; SOAK_MINUTES runs for that long instead, with 64 QPs, sampling goroutines, live heap and
// RSS, which must stay flat; SOAK_HOG=1 keeps every CPU busy with another process meanwhile and
// runs the QPs at Local ACK Timeout 12, which starvation used to turn into RETRY_EXC_ERR.
package soak
