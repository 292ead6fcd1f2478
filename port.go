package gorxe

import "github.com/gorxe/gorxe/internal/netdev"

// IB physical port states (IBTA vol. 1, PortInfo:PortPhysicalState) that rxe reports.
const (
	physStatePolling  = 2
	physStateDisabled = 3
	physStateLinkUp   = 5
)

// portOnLink is the port state and physical state kernel rxe reports over an interface's link:
// active with the link up only while the interface runs; otherwise down, physically polling if
// the interface is up without carrier, disabled if the administrator took it down.
func portOnLink(l netdev.Link) (PortState, uint8) {
	switch {
	case l.Up && l.Running:
		return PortActive, physStateLinkUp
	case l.Up:
		return PortDown, physStatePolling
	default:
		return PortDown, physStateDisabled
	}
}

// link is the link of the interface the device is bound to, read at each call as rxe reads its
// netdev's. A device on an address no local interface has (a supplied network's) has no carrier
// to watch and runs.
func (d *Device) link() netdev.Link {
	if d.bind.NetDev != "" {
		if l, ok := netdev.LinkOf(d.bind.NetDev); ok {
			return l
		}
	}
	return netdev.Link{Up: true, Running: true}
}
