package netdev

import "net"

// Link is the state of a network interface that kernel rxe reads to report its port: whether the
// interface is up (IFF_UP, set by the administrator) and whether it runs (IFF_RUNNING:
// operationally up, which needs carrier).
type Link struct {
	Up, Running bool
}

// LinkOf reads the link of the interface named; ok is false when there is no such interface.
func LinkOf(name string) (l Link, ok bool) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return Link{}, false
	}
	return Link{Up: ifi.Flags&net.FlagUp != 0, Running: ifi.Flags&net.FlagRunning != 0}, true
}
