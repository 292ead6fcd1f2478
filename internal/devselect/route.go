package devselect

import (
	"fmt"
	"net"
	"net/netip"
)

// RouteSource returns the local address the host's routing table picks to reach dst, which is
// what rdma_resolve_addr binds an RDMA-CM client to when it is given no source. Connecting a UDP
// socket asks the kernel without sending anything.
func RouteSource(dst netip.Addr) (netip.Addr, error) {
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(dst, 9)))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("no route to %v: %w", dst, err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap(), nil
}
