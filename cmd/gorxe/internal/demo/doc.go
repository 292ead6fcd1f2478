// Package demo runs gorxe's narrated walkthrough: two devices on this machine's loopback doing real
// RDMA over UDP port 4791, each step verified and shown packet by packet. It can also write the
// run as a pcapng capture and a ladder diagram, and (Walkthrough) run the exchanges
// docs/wire-walkthrough.md explains, writing each one's capture and diagram.
//
// The narration decodes every datagram with the packet package as its sender hands it to the
// network, in the order the network gets it, so it works on any UDP port and shows what fault
// injection did to each packet in its place.
package demo
