package launch

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"syscall"

	"github.com/gorxe/gorxe/internal/devselect"
)

// checkAddr says what is wrong with name as GORXE_ADDR, or nil: the library reads it as
// devselect does (an interface name, an address, or a gorxe device name of either), and its device
// can only bind to an interface that is up with an address, or to an address of this host. label
// says where name came from, for the error.
func checkAddr(label, name string, getenv func(string) string) error {
	cfg, err := devselect.Selection{Device: name}.Config(getenv)
	switch {
	case errors.Is(err, devselect.ErrDeviceNotFound):
		return fmt.Errorf("%s: no interface of this host is called that, and it is no IP address", label)
	case err != nil:
		return err
	case cfg.Interface != "":
		if !slices.Contains(devselect.Interfaces(), cfg.Interface) {
			return fmt.Errorf("%s: interface %s is down or has no address", label, cfg.Interface)
		}
		return nil
	}
	// Binding a UDP socket to the address, on a port the kernel picks, is the question the
	// library's device asks when it opens: whether this host has the address.
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(cfg.Addr, 0)))
	switch {
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("%s: no interface of this host has the address %s", label, cfg.Addr)
	case err != nil:
		return fmt.Errorf("%s: %w", label, err)
	}
	return c.Close()
}
