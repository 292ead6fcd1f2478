package netio

import "net/netip"

// DefaultSocketBuffer is the send and receive buffer size the UDP backend asks the kernel for.
// Bursts of RoCE packets overflow the default of a few hundred kilobytes; the kernel caps the
// request at net.core.rmem_max / wmem_max unless the process may exceed them.
const DefaultSocketBuffer = 7 << 20

// DefaultMaxSendSockets bounds the source-port sockets of one UDPConn: enough for every port of the
// RoCE range 0xC000-0xFFFF.
const DefaultMaxSendSockets = 1 << 14

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
	return c
}
