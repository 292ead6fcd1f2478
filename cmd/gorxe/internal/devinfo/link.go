package devinfo

import (
	"net"
	"net/netip"

	"github.com/gorxe/gorxe"
)

// Link is the state of the network interface under a device, the two things kernel rxe reads from
// its netdev to report its port: whether the interface is up (IFF_UP, set by the administrator)
// and whether it runs (IFF_RUNNING: operationally up, with carrier).
type Link struct {
	Up, Running bool
}

// LinkFunc reads the link of the interface named; ok is false when there is no such interface.
type LinkFunc func(ifname string) (l Link, ok bool)

// SystemLink reads an interface's link from the system.
func SystemLink(ifname string) (Link, bool) {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return Link{}, false
	}
	return Link{Up: ifi.Flags&net.FlagUp != 0, Running: ifi.Flags&net.FlagRunning != 0}, true
}

// IB physical port states (IBTA vol. 1, PortInfo:PortPhysicalState) that rxe reports.
const (
	physPolling  = 2
	physDisabled = 3
	physLinkUp   = 5
)

// onLink returns pa as kernel rxe reports a port over l: active with the link up only when the
// interface runs; otherwise down, and physically polling if the interface is up (no carrier) or
// disabled if it is down.
func onLink(pa gorxe.PortAttr, l Link) gorxe.PortAttr {
	switch {
	case l.Up && l.Running:
		return pa
	case l.Up:
		pa.State, pa.PhysState = gorxe.PortDown, physPolling
	default:
		pa.State, pa.PhysState = gorxe.PortDown, physDisabled
	}
	return pa
}

// linked is a Device whose port shows the link of the interface it is bound to: a gorxe device
// itself always reports its port active, having no carrier of its own to watch.
type linked struct {
	Device
	link Link
}

func (d linked) QueryPort(port uint8) (gorxe.PortAttr, error) {
	pa, err := d.Device.QueryPort(port)
	if err != nil {
		return pa, err
	}
	return onLink(pa, d.link), nil
}

// interfaceOf returns the name of the interface cfg binds to: the one it names, or the one that
// has its address ("" if none has).
func interfaceOf(cfg gorxe.Config) string {
	if cfg.Interface != "" {
		return cfg.Interface
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	for _, ifi := range ifs {
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if p, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(p.IP); ok && ip.Unmap() == cfg.Addr.Unmap() {
					return ifi.Name
				}
			}
		}
	}
	return ""
}
