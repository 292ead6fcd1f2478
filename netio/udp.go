package netio

import "net/netip"

// DefaultSocketBuffer is the send and receive buffer size the UDP backend asks the kernel for.
// Bursts of RoCE packets overflow the default of a few hundred kilobytes; the kernel caps the
// request at net.core.rmem_max / wmem_max unless the process may exceed them.
const DefaultSocketBuffer = 7 << 20

// DefaultMaxSendSockets bounds the source-port sockets of one UDPConn: enough for every port of the
// RoCE range 0xC000-0xFFFF.
const DefaultMaxSendSockets = 1 << 14

// DefaultGROSlots is the number of coalesced datagrams a listening socket reads per system call
// when UDP_GRO is on. Each slot is a 64 KiB buffer, so this costs 1 MiB per listening socket.
const DefaultGROSlots = 16

// UDPConfig configures [ListenUDP].
type UDPConfig struct {
	// Addrs are the local addresses to listen on, IPv4 or IPv6, each a specific address: binding
	// the wildcard would stop other devices on the host from using the port on their addresses.
	Addrs []netip.Addr
	// Port is the listening port; zero means DefaultPort.
	Port uint16
	// SocketBuffer is the SO_RCVBUF/SO_SNDBUF size to request; zero means DefaultSocketBuffer and
	// a negative value keeps the kernel's default. Failure to get it is not an error.
	SocketBuffer int
	// ZeroChecksum sends UDP checksum 0, as kernel rxe does (SO_NO_CHECK for IPv4,
	// UDP_NO_CHECK6_TX for IPv6). Receiving zero checksums over IPv6 is always enabled.
	ZeroChecksum bool
	// MaxSendSockets bounds the number of source-port sockets; zero means DefaultMaxSendSockets.
	MaxSendSockets int

	// DisableGSO keeps every datagram its own sendmmsg entry. Without it, Send coalesces runs of
	// equal-sized datagrams into UDP_SEGMENT sends (see [UDPConn.Send]). ZeroChecksum implies it:
	// Linux refuses segmentation offload on a socket that sends checksum 0.
	DisableGSO bool
	// DisableGRO keeps UDP_GRO off on the listening sockets, so Receive reads straight into the
	// caller's buffers, one datagram per slot.
	DisableGRO bool
	// GROSlots is the number of 64 KiB buffers a listening socket reads into per system call when
	// GRO is on; zero means DefaultGROSlots.
	GROSlots int
	// SetIPv4ID lets IPv4 datagrams be coalesced. The kernel numbers the IPv4 Identification of
	// the datagrams of one segmented send 0, 1, 2, ..., where a single datagram gets 0 (the socket
	// is unconnected with DF set), and a caller whose payload carries a checksum over the IP
	// header (the RoCEv2 ICRC) must know. Send calls SetIPv4ID(m, 0, id) for every IPv4 datagram
	// that will leave with an ID other than 0, before handing it to the kernel, and
	// SetIPv4ID(m, id, 0) if the segmented send is refused and the datagram goes out on its own,
	// or if Send returns without sending it; a datagram never announced leaves with ID 0. It runs
	// on the sending goroutine and may rewrite m.Buf in place but not change its length. It
	// should adjust the checksum by the change of ID (packet.AdjustICRCIPv4ID) rather than
	// compute it afresh, so that a datagram corrupted on purpose by [WithFaults] stays corrupt.
	// When nil, IPv4 datagrams are never coalesced; IPv6 has no Identification and is coalesced
	// regardless.
	SetIPv4ID func(m *Message, from, to uint16)
}

func (c UDPConfig) withDefaults() UDPConfig {
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.SocketBuffer == 0 {
		c.SocketBuffer = DefaultSocketBuffer
	}
	if c.MaxSendSockets <= 0 {
		c.MaxSendSockets = DefaultMaxSendSockets
	}
	if c.GROSlots <= 0 {
		c.GROSlots = DefaultGROSlots
	}
	if c.ZeroChecksum {
		c.DisableGSO = true
	}
	return c
}
