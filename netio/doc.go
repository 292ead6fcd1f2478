// Package netio moves batches of UDP datagrams for a RoCEv2 device: a real UDP backend using
// batched system calls, an in-memory fabric for deterministic tests, and a fault-injecting wrapper
// that works over either.
//
// It is one of gorxe's engine packages, the device layer's network. Programs embed gorxe through
// the root package, github.com/gorxe/gorxe, which opens UDP sockets itself; a program or test uses
// this package only to hand a device another network (Config.Network, e.g. a [Fabric]) or to
// watch its datagrams (Config.Tap), and the root names those types too (Network, Datagram,
// TapFunc).
//
// The package knows nothing of RDMA. Its unit is the [Message]: one datagram plus the addresses,
// traffic class and hop limit that RoCEv2 needs to control. Every backend implements [Conn].
//
// # Ownership
//
// Buffers belong to the caller. Send (a Conn's, or a [Sender]'s: one goroutine's own sender,
// [NewSender], whose system call scratch is its own) reads msgs[i].Buf and keeps no reference
// after it returns;
// Receive writes into msgs[i].Buf[:cap(msgs[i].Buf)] and re-slices Buf to what it received, so
// the same messages can be handed back to Receive after re-slicing each Buf to its capacity (the
// UDP backend may exchange Buf slices among the messages of one call, but every filled Buf is one
// the caller offered). Datagrams never share memory between sender and receiver.
//
// A Message offered a buffer of [CoalesceBufSize] or more may receive a whole coalesced run
// (UDP generic receive offload): Buf then holds consecutive datagrams of one flow, each
// SegmentSize bytes but the last, read in place without a copy ([Message.Datagrams],
// [Message.Datagram]). A smaller buffer holds exactly one datagram: the UDP backend reads runs
// into buffers of its own and copies them out one datagram per Message.
//
// # Segmentation offload
//
// On Linux the UDP backend sends runs of equal-sized datagrams to one destination as one
// UDP_SEGMENT send and turns UDP_GRO on, so that on one host a run crosses the kernel as a single
// buffer: per datagram that is many times cheaper than sendmmsg and recvmmsg alone. Where the
// kernel refuses (an old kernel, a device or route without checksum offload, zero checksums),
// a socket falls back to one datagram per entry without losing any; [Counters] shows how often
// each path was taken.
//
// # IPv4 Identification and the ICRC
//
// The IPv4 Identification field is covered by the RoCEv2 invariant CRC. The UDP backend keeps every
// socket unconnected and sets "don't fragment" (IP_PMTUDISC_DO), which makes Linux send IP ID 0 on
// each datagram. A sender must therefore compute the ICRC of IPv4 packets with ID 0, except for the
// datagrams of a segmented send, which the kernel numbers 0, 1, 2, ...: the backend coalesces IPv4
// datagrams only when [UDPConfig.SetIPv4ID] is set, and tells it the ID each will carry.
// Connecting a socket would make the kernel use a per-socket counter instead, so no socket here is
// ever connected.
//
// # Source ports
//
// RoCEv2 receivers listen on UDP 4791, and senders pick a source port per queue pair (0xC000-0xFFFF)
// so that ECMP spreads flows. A Message whose Src port is 0 or the listening port leaves from the
// listening socket; any other source port leaves from a send socket bound to exactly that address
// and port, created on first use and kept for the Conn's lifetime. The receiver learns the real
// source port from Src, and the ICRC covers the port actually used.
package netio
