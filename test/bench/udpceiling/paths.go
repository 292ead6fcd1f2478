package main

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/gorxe/gorxe/netio"
)

// A path is one way of moving datagrams through netio's UDP backend.
type path string

const (
	pathMmsg path = "sendmmsg"
	pathGSO  path = "gso+gro"
	// pathGRO is GRO at the receiver of a sender that does not segment, as with a kernel rxe
	// peer: every datagram arrives alone.
	pathGRO path = "gro"
)

// label is the path's name in the Markdown table.
func (p path) label() string {
	switch p {
	case pathGSO:
		return "UDP_SEGMENT + UDP_GRO"
	case pathGRO:
		return "sendmmsg + UDP_GRO"
	}
	return "sendmmsg/recvmmsg"
}

// udpConfig returns the backend configuration of path p.
func (p path) udpConfig() (netio.UDPConfig, error) {
	switch p {
	case pathMmsg:
		return netio.UDPConfig{DisableGSO: true, DisableGRO: true}, nil
	case pathGSO:
		// Raw datagrams carry no checksum over the IP header, so any IPv4 ID will do.
		return netio.UDPConfig{SetIPv4ID: func(*netio.Message, uint16, uint16) {}}, nil
	case pathGRO:
		return netio.UDPConfig{DisableGSO: true}, nil
	}
	return netio.UDPConfig{}, fmt.Errorf("unknown path %q", p)
}

const (
	minDatagram = 8     // room for a sequence number
	maxDatagram = 65507 // the largest IPv4 UDP payload
	firstPort   = 47910 // where the search for free ports starts
	portTries   = 200
)

// listen opens netio's UDP backend for path p on addr, at the first free port from firstPort.
func listen(p path, addr netip.Addr) (*netio.UDPConn, error) {
	cfg, err := p.udpConfig()
	if err != nil {
		return nil, err
	}
	cfg.Addrs = []netip.Addr{addr}
	var lastErr error
	for port := firstPort; port < firstPort+portTries; port++ {
		cfg.Port = uint16(port)
		c, err := netio.ListenUDP(cfg)
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, errors.Join(fmt.Errorf("no free port on %v", addr), lastErr)
}
