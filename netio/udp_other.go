//go:build !linux

package netio

import "net/netip"

// UDPConn is the real UDP backend. It is implemented for Linux only; elsewhere ListenUDP fails
// with ErrNotSupported.
type UDPConn struct{}

var _ Conn = (*UDPConn)(nil)

// ListenUDP fails with ErrNotSupported on this platform.
func ListenUDP(cfg UDPConfig) (*UDPConn, error) { return nil, ErrNotSupported }

// Send implements [Conn].
func (*UDPConn) Send([]Message) (int, error) { return 0, ErrNotSupported }

// Receive implements [Conn].
func (*UDPConn) Receive([]Message) (int, error) { return 0, ErrNotSupported }

// TryReceive implements [Conn].
func (*UDPConn) TryReceive([]Message) (int, error) { return 0, ErrNotSupported }

// BatchSize implements [Conn].
func (*UDPConn) BatchSize() int { return 1 }

// ReceiveBufSize implements [Conn].
func (*UDPConn) ReceiveBufSize() int { return 0 }

// LocalAddrs implements [Conn].
func (*UDPConn) LocalAddrs() []netip.AddrPort { return nil }

// Counters implements [Conn].
func (*UDPConn) Counters() Counters { return Counters{} }

// SendSockets returns 0.
func (*UDPConn) SendSockets() int { return 0 }

// Close implements [Conn].
func (*UDPConn) Close() error { return ErrNotSupported }

// JoinGroup implements [GroupConn].
func (*UDPConn) JoinGroup(netip.Addr) error { return ErrNotSupported }

// LeaveGroup implements [GroupConn].
func (*UDPConn) LeaveGroup(netip.Addr) error { return ErrNotSupported }
