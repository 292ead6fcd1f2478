package devselect

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/netio"
)

// Environment variables the tools read.
const (
	// EnvAddr names the interface or address a tool binds to when neither --bind nor -d is given.
	EnvAddr = "GORXE_ADDR"
	// EnvPort overrides the RoCEv2 UDP port (4791). It is a testing knob: both peers must set the
	// same value, and a C tool on kernel rxe always uses 4791. The root reads it (PortFromEnv).
	EnvPort = gorxe.EnvPort
)

// DeviceNamePrefix starts the name of every gorxe device ("gorxe_eth0"); -d accepts names with or
// without it.
const DeviceNamePrefix = "gorxe_"

// ErrDeviceNotFound: the -d argument names no local interface and is no address.
var ErrDeviceNotFound = errors.New("IB device not found")

// Selection says which local addresses a tool's device binds to. The first non-empty source wins:
//
//  1. Bind (--bind ADDR): exactly that address;
//  2. Device (-d / --ib-dev): an interface name (every address of it, with rxe's GID table layout),
//     an IP address, or a gorxe device name such as gorxe_eth0;
//  3. the GORXE_ADDR environment variable, read like Device;
//  4. the first interface that is up, is not loopback and has an IPv4 address;
//  5. 127.0.0.1.
type Selection struct {
	Bind   string
	Device string
	// Tap, when set, becomes the device's Config.Tap.
	Tap netio.TapFunc
	// Logger, when set, becomes the device's Config.Logger.
	Logger *slog.Logger
	// BusyPoll becomes the device's Config.BusyPoll (latency mode).
	BusyPoll time.Duration
	// ReceivePoll becomes the device's Config.ReceivePoll.
	ReceivePoll time.Duration
}

// EnvPcap turns capture on for every command: GORXE_PCAP=FILE, as --pcap FILE does. The tools'
// session owns the capture file.
const EnvPcap = "GORXE_PCAP"

// Config turns the selection into a device configuration. getenv reads the environment (os.Getenv
// outside tests); GORXE_PORT sets Config.Port.
func (s Selection) Config(getenv func(string) string) (gorxe.Config, error) {
	var cfg gorxe.Config
	port, err := gorxe.PortFromEnv(getenv)
	if err != nil {
		return cfg, err
	}
	cfg.Port, cfg.Tap, cfg.Logger, cfg.BusyPoll, cfg.ReceivePoll = port, s.Tap, s.Logger, s.BusyPoll, s.ReceivePoll
	switch {
	case s.Bind != "":
		a, err := parseAddr(s.Bind)
		if err != nil {
			return cfg, fmt.Errorf("--bind %s: not an IP address", s.Bind)
		}
		cfg.Addr = a
	case s.Device != "":
		if err := bindName(&cfg, s.Device); err != nil {
			return cfg, err
		}
	case getenv(EnvAddr) != "":
		if err := bindName(&cfg, getenv(EnvAddr)); err != nil {
			return cfg, fmt.Errorf("%s: %w", EnvAddr, err)
		}
	default:
		if name := defaultInterface(); name != "" {
			cfg.Interface = name
		} else {
			cfg.Addr = netip.AddrFrom4([4]byte{127, 0, 0, 1})
		}
	}
	return cfg, nil
}

// Open opens the device of cfg, saying what to do when its port is taken.
func Open(cfg gorxe.Config) (*gorxe.Device, error) {
	dev, err := gorxe.Open(cfg)
	if err != nil {
		return nil, ExplainInUse(err, cfg.Port, "give each tool its own address with --bind ADDR (on one host, e.g. --bind 127.0.0.1 and --bind 127.0.0.2)")
	}
	return dev, nil
}

// DeviceName is the name a device opened with cfg takes: Config.Name, else the prefix and the
// interface or address it binds to.
func DeviceName(cfg gorxe.Config) string {
	if cfg.Name != "" {
		return cfg.Name
	}
	return DeviceNamePrefix + cmp.Or(cfg.Interface, cfg.Addr.WithZone("").String())
}

// ExplainInUse adds to an error of opening a device on port (0: the standard port) what to do
// when the port is taken on that address: without --bind two tools on one host both choose the
// first interface, and the second cannot have its RoCE port. fix says how to choose another
// address in the command at hand.
func ExplainInUse(err error, port uint16, fix string) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	if port == 0 {
		port = netio.DefaultPort
	}
	return fmt.Errorf("%w (UDP port %d of that address is taken, by another gorxe tool or another RoCE stack on this host: %s)", err, port, fix)
}

// bindName fills cfg from an interface name, a gorxe device name or an address.
func bindName(cfg *gorxe.Config, name string) error {
	if a, err := parseAddr(name); err == nil {
		cfg.Addr = a
		return nil
	}
	for _, n := range []string{name, strings.TrimPrefix(name, DeviceNamePrefix)} {
		if _, err := net.InterfaceByName(n); err == nil {
			cfg.Interface = n
			return nil
		}
	}
	if rest, ok := strings.CutPrefix(name, DeviceNamePrefix); ok {
		if a, err := parseAddr(rest); err == nil {
			cfg.Addr = a
			return nil
		}
	}
	return fmt.Errorf("IB device %s not found: %w", name, ErrDeviceNotFound)
}

// parseAddr accepts an IP address, an IPv6 address with a zone, and a bracketed IPv6 address.
func parseAddr(s string) (netip.Addr, error) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, err
	}
	return a.Unmap(), nil
}

// defaultInterface returns the first interface that is up, not loopback, and has an IPv4 address.
func defaultInterface() string {
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagUp == 0 || ifi.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if p, ok := a.(*net.IPNet); ok && p.IP.To4() != nil {
				return ifi.Name
			}
		}
	}
	return ""
}

// DeviceNames lists gorxe's devices as rxe lists its devices: one per network interface that is
// up and has an address, named "gorxe_" and the interface's name.
func DeviceNames() []string {
	var out []string
	for _, n := range Interfaces() {
		out = append(out, DeviceNamePrefix+n)
	}
	return out
}

// Interfaces names the network interfaces that are up and have an address, in the kernel's
// order: the interfaces a device is listed for.
func Interfaces() []string {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var out []string
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagUp == 0 {
			continue
		}
		if addrs, err := ifi.Addrs(); err == nil && len(addrs) > 0 {
			out = append(out, ifi.Name)
		}
	}
	return out
}

// Configs lists the devices a program on gorxe's C library sees, in the order
// ibv_get_device_list gives them: the one GORXE_ADDR names when it is set (getenv reads it), else
// one per interface that is up and has an address, as rxe has one per netdev it is added to.
// DeviceName names each.
func Configs(getenv func(string) string) ([]gorxe.Config, error) {
	if getenv(EnvAddr) != "" {
		cfg, err := Selection{}.Config(getenv)
		if err != nil {
			return nil, err
		}
		return []gorxe.Config{cfg}, nil
	}
	var out []gorxe.Config
	for _, n := range Interfaces() {
		out = append(out, gorxe.Config{Interface: n})
	}
	return out, nil
}

// OpenUnbound opens a device of cfg on a private in-memory network, with one worker: it answers
// queries (attributes, port, GID table) without binding a UDP port, which another program may
// hold. The port still shows the link of the interface the address is on.
func OpenUnbound(cfg gorxe.Config) (*gorxe.Device, error) {
	fab := netio.NewFabric(netio.FabricConfig{})
	cfg.Network = fab.Network()
	cfg.Workers = 1
	return gorxe.Open(cfg)
}
