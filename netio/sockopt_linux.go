package netio

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setSocketOptions prepares a RoCE socket before it is bound. Every socket, listening or sending,
// gets "don't fragment" because that (with the socket left unconnected) is what makes Linux send
// IPv4 ID 0, which the ICRC covers. Listening sockets get large buffers; send sockets get a tiny
// receive buffer because nothing should arrive on them and anything that does is best dropped by
// the kernel rather than queued unread.
func setSocketOptions(rc syscall.RawConn, is6, listener bool, cfg *UDPConfig) error {
	var err error
	ctrlErr := rc.Control(func(fd uintptr) {
		err = setSocketOptionsFD(int(fd), is6, listener, cfg)
	})
	if ctrlErr != nil {
		return ctrlErr
	}
	return err
}

func setSocketOptionsFD(fd int, is6, listener bool, cfg *UDPConfig) error {
	set := func(name string, level, opt, value int) error {
		if err := unix.SetsockoptInt(fd, level, opt, value); err != nil {
			return &syscallOptError{name: name, err: err}
		}
		return nil
	}
	if is6 {
		if err := set("IPV6_MTU_DISCOVER", unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_DO); err != nil {
			return err
		}
		// Kernel rxe sends IPv6 UDP with checksum 0, which Linux drops unless the socket opts in.
		if err := set("UDP_NO_CHECK6_RX", unix.IPPROTO_UDP, unix.UDP_NO_CHECK6_RX, 1); err != nil {
			return err
		}
		if cfg.ZeroChecksum {
			if err := set("UDP_NO_CHECK6_TX", unix.IPPROTO_UDP, unix.UDP_NO_CHECK6_TX, 1); err != nil {
				return err
			}
		}
	} else {
		if err := set("IP_MTU_DISCOVER", unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO); err != nil {
			return err
		}
		if cfg.ZeroChecksum {
			if err := set("SO_NO_CHECK", unix.SOL_SOCKET, unix.SO_NO_CHECK, 1); err != nil {
				return err
			}
		}
	}
	if cfg.SocketBuffer > 0 {
		setBuffer(fd, unix.SO_SNDBUFFORCE, unix.SO_SNDBUF, cfg.SocketBuffer)
		if listener {
			setBuffer(fd, unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, cfg.SocketBuffer)
		}
	}
	if !listener {
		// The kernel rounds this up to its minimum.
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 1)
		// Source ports are chosen per QP with rxe's formula, so two gorxe processes on one address
		// (a perftest server and client, parallel test binaries) pick the same ports. Nothing is
		// received on these sockets, so sharing the port is harmless; refusing it would stop one
		// process from sending at all, since the ICRC already covers the port.
		if err := set("SO_REUSEPORT", unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
			return err
		}
	}
	return nil
}

// enableGRO asks the kernel to hand a socket the datagrams of one flow coalesced, with a UDP_GRO
// control message giving their size.
func enableGRO(rc syscall.RawConn) error {
	var err error
	ctrlErr := rc.Control(func(fd uintptr) {
		err = unix.SetsockoptInt(int(fd), unix.SOL_UDP, unix.UDP_GRO, 1)
		if err != nil {
			err = &syscallOptError{name: "UDP_GRO", err: err}
		}
	})
	if ctrlErr != nil {
		return ctrlErr
	}
	return err
}

// skMeminfoDrops is the index of the socket's drop count in the SO_MEMINFO array (SK_MEMINFO_DROPS).
const skMeminfoDrops = 8

// kernelDrops returns how many datagrams the kernel dropped on their way into the socket, nearly
// always because its receive buffer was full. ok is false if the kernel would not say.
func kernelDrops(rc syscall.RawConn) (drops uint64, ok bool) {
	var info [skMeminfoDrops + 1]uint32
	size := uint32(unsafe.Sizeof(info))
	var errno syscall.Errno
	if rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.SOL_SOCKET, unix.SO_MEMINFO,
			uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&size)), 0)
	}) != nil || errno != 0 || size < uint32(unsafe.Sizeof(info)) {
		return 0, false
	}
	return uint64(info[skMeminfoDrops]), true
}

// setBuffer asks for size bytes, past the sysctl limit if the process is allowed to, and settles for
// what the kernel grants otherwise.
func setBuffer(fd, forceOpt, opt, size int) {
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, forceOpt, size) == nil {
		return
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, opt, size)
}

// syscallOptError names the socket option that could not be set.
type syscallOptError struct {
	name string
	err  error
}

func (e *syscallOptError) Error() string { return "setsockopt " + e.name + ": " + e.err.Error() }
func (e *syscallOptError) Unwrap() error { return e.err }

// getsockoptInt reads an integer socket option, for tests and diagnostics.
func getsockoptInt(rc syscall.RawConn, level, opt int) (int, error) {
	var v int
	var err error
	ctrlErr := rc.Control(func(fd uintptr) { v, err = unix.GetsockoptInt(int(fd), level, opt) })
	if ctrlErr != nil {
		return 0, ctrlErr
	}
	return v, err
}
