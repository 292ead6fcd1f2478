// Package demo runs gorxe's narrated walkthrough: two devices on this machine's loopback doing real
// RDMA over UDP port 4791, each step verified and shown packet by packet.
package demo
