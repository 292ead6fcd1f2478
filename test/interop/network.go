package main

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
)

// The test network lives in its own network namespace, so its addresses, bridge and UDP 4791 never
// meet the host's. Addresses come from the benchmarking range (RFC 2544) and a ULA prefix.
const (
	netnsName  = "gorxe-interop"
	bridgeName = "gxbr0"
	nftTable   = "gorxe_interop"
)

var (
	hostIP4  = netip.MustParsePrefix("198.18.0.1/24")
	hostIP6  = netip.MustParsePrefix("fd67:6f72:7865::1/64")
	lossMod  = 50 // drop one RoCE packet in lossMod, about 2 %
	roceUDP  = 4791
	guestMAC = "52:54:00:67:78:%02x"
)

// guestAddrs returns VM n's addresses (n counts from 1).
func guestAddrs(n int) (ip4, ip6 netip.Prefix) {
	a4 := hostIP4.Addr().As4()
	a4[3] = byte(10 + n)
	a6 := hostIP6.Addr().As16()
	a6[15] = byte(0x10 + n)
	return netip.PrefixFrom(netip.AddrFrom4(a4), hostIP4.Bits()), netip.PrefixFrom(netip.AddrFrom16(a6), hostIP6.Bits())
}

func tapName(n int) string { return fmt.Sprintf("gxtap%d", n) }

// eui64LinkLocal is the link-local address a kernel in EUI-64 mode gives an interface with MAC mac,
// which is also the GID rxe (and gorxe) put at index 0.
func eui64LinkLocal(mac net.HardwareAddr) netip.Addr {
	b := [16]byte{0: 0xfe, 1: 0x80}
	if len(mac) == 6 {
		b[8], b[9], b[10], b[11], b[12] = mac[0]^0x02, mac[1], mac[2], 0xff, 0xfe
		b[13], b[14], b[15] = mac[3], mac[4], mac[5]
	}
	return netip.AddrFrom16(b)
}

// bridgeLinkLocal is the EUI-64 link-local address of the bridge, the host's GID index 0.
func bridgeLinkLocal() (netip.Addr, error) {
	ifi, err := net.InterfaceByName(bridgeName)
	if err != nil {
		return netip.Addr{}, err
	}
	return eui64LinkLocal(ifi.HardwareAddr), nil
}

// bridgeHasLinkLocal checks that the bridge has its EUI-64 link-local address.
func bridgeHasLinkLocal() error {
	want, err := bridgeLinkLocal()
	if err != nil {
		return err
	}
	ifi, err := net.InterfaceByName(bridgeName)
	if err != nil {
		return err
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if p, ok := a.(*net.IPNet); ok && p.IP.Equal(want.AsSlice()) {
			return nil
		}
	}
	return fmt.Errorf("%s has no link-local address %v (its addresses: %v)", bridgeName, want, addrs)
}

// createNetns makes a fresh namespace, first removing a stale one a killed run left, together with
// the processes that run left in it.
func createNetns(log *logger) error {
	if _, err := os.Stat("/run/netns/" + netnsName); err == nil {
		log.printf("removing stale network namespace %s", netnsName)
		if err := deleteNetns(); err != nil {
			return err
		}
	}
	_, err := output("ip", "netns", "add", netnsName)
	return err
}

// deleteNetns kills what still runs in the namespace (by process id) and removes it.
func deleteNetns() error {
	if pids, err := output("ip", "netns", "pids", netnsName); err == nil {
		for _, pid := range strings.Fields(pids) {
			output("kill", "-9", pid)
		}
	}
	_, err := output("ip", "netns", "del", netnsName)
	return err
}

// ip runs one `ip` command; network setup failures are fatal to the suite.
func ip(args ...string) error {
	_, err := output("ip", args...)
	return err
}

// setupBridge creates, inside the namespace, the bridge with the host's test addresses and one tap
// per VM. Duplicate address detection is off so IPv6 addresses (and so GIDs) exist at once. The
// bridge's link-local address is the EUI-64 one whatever the host's default address generation
// mode, so that it is the GID at index 0, as the guests' are.
func setupBridge(vms int) error {
	for _, s := range []string{"net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0"} {
		if _, err := output("sysctl", "-q", "-w", s); err != nil {
			return err
		}
	}
	steps := [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", bridgeName, "type", "bridge", "stp_state", "0", "forward_delay", "0"},
		{"link", "set", bridgeName, "addrgenmode", "eui64"},
	}
	for n := 1; n <= vms; n++ {
		steps = append(steps,
			[]string{"tuntap", "add", "dev", tapName(n), "mode", "tap"},
			[]string{"link", "set", tapName(n), "master", bridgeName},
			[]string{"link", "set", tapName(n), "up"})
	}
	steps = append(steps,
		[]string{"addr", "add", hostIP4.String(), "dev", bridgeName},
		[]string{"-6", "addr", "add", hostIP6.String(), "dev", bridgeName, "nodad"},
		[]string{"link", "set", bridgeName, "up"})
	steps = append(steps, multicastBridgeSteps()...)
	for _, s := range steps {
		if err := ip(s...); err != nil {
			return err
		}
	}
	return nil
}

// setHostMTU sets the MTU of the taps and then the bridge (a bridge cannot exceed its ports).
func setHostMTU(vms, mtu int) error {
	for n := 1; n <= vms; n++ {
		if err := ip("link", "set", tapName(n), "mtu", fmt.Sprint(mtu)); err != nil {
			return err
		}
	}
	return ip("link", "set", bridgeName, "mtu", fmt.Sprint(mtu))
}

// lossMode says which RoCE packets the bridge drops (about 2 % of them).
type lossMode int

const (
	lossOff lossMode = iota
	// lossAll drops any RoCE packet, acknowledgements included.
	lossAll
	// lossSpareACKs drops every kind but RC ACKNOWLEDGE. The pingpongs need it: they end without
	// a closing barrier, so the side that receives the last message exits at once, and if its
	// ACK is lost the sender retransmits into a destroyed QP; kernel rxe treats retry_cnt 7 as
	// "retry forever" and hangs. That happens between two kernel rxe peers too, and says nothing
	// about either stack. Tools that end with a barrier take lossAll (tool.barrier): all the
	// perftest tools but ib_write_lat.
	lossSpareACKs
	// lossSpareACKsCM is lossSpareACKs plus one MAD to QP1 in lossModCM: with a handful of CM
	// MADs per connection, 2 % alone would seldom hit one, and a lost REQ, REP, RTU or DREP is
	// what makes both sides' connection managers retransmit. DREQs are spared, as the pingpongs'
	// ACKs are: kernel rping's client exits right after its DREQ, and destroying the ID stops the
	// kernel CM retransmitting it (cm_destroy_id in DREQ_SENT goes to timewait), so a lost DREQ
	// leaves the server waiting for a disconnect that never comes, between two kernel rxe peers too.
	lossSpareACKsCM
)

// lossModCM is the share of CM MADs lossSpareACKsCM drops besides: one in four.
const lossModCM = 4

// madAttrDREQ is the attribute ID of a CM DREQ.
const madAttrDREQ = 0x0015

// rcAcknowledge is the BTH opcode of an RC ACKNOWLEDGE packet.
const rcAcknowledge = 0x11

func (m lossMode) String() string {
	switch m {
	case lossAll:
		return "loss2%"
	case lossSpareACKs:
		return "loss2%-no-acks"
	case lossSpareACKsCM:
		return "loss2%-no-acks+25%-mads"
	}
	return "no-loss"
}

// lossFor is the loss mode case rc runs under in a lossy phase: its own, else its tool's.
func lossFor(rc runCase) lossMode {
	if rc.loss != lossOff {
		return rc.loss
	}
	if rc.tool.barrier {
		return lossAll
	}
	return lossSpareACKs
}

// setLoss replaces the nftables bridge table that drops RoCE packets. The rule sits on the
// forward hook (VM to VM) and on input and output (host to VM and back), since frames the host
// itself sends or receives never pass the bridge's forward hook.
func setLoss(m lossMode) error {
	output("nft", "delete", "table", "bridge", nftTable)
	if m == lossOff {
		return nil
	}
	f, err := os.CreateTemp("", "gorxe-nft-*.nft")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(lossRules(m)); err != nil {
		f.Close()
		return err
	}
	f.Close()
	_, err = output("nft", "-f", f.Name())
	return err
}

// lossRules is the nftables table of loss mode m.
func lossRules(m lossMode) string {
	match := fmt.Sprintf("udp dport %d", roceUDP)
	if m == lossSpareACKs || m == lossSpareACKsCM {
		// @th,64,8 is the byte after the 8-byte UDP header: the BTH opcode.
		match += fmt.Sprintf(" @th,64,8 != %d", rcAcknowledge)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "table bridge %s {\n", nftTable)
	for _, hook := range []string{"forward", "input", "output"} {
		fmt.Fprintf(&b, "  chain %s { type filter hook %s priority 0; policy accept;\n", hook, hook)
		if m == lossSpareACKsCM {
			// @th,104,24 is the BTH's destination QP (bytes 5 to 7); @th,352,16 a MAD's attribute
			// ID (after the UDP header, the BTH, the DETH and 16 bytes of the MAD header).
			fmt.Fprintf(&b, "    udp dport %d @th,104,24 == 1 @th,352,16 == %#04x accept\n", roceUDP, madAttrDREQ)
			fmt.Fprintf(&b, "    udp dport %d @th,104,24 == 1 numgen random mod %d == 0 counter drop\n", roceUDP, lossModCM)
		}
		fmt.Fprintf(&b, "    %s numgen random mod %d == 0 counter drop\n  }\n", match, lossMod)
	}
	b.WriteString("}\n")
	return b.String()
}

// lossDrops sums the drop counters of the loss table (0 when it is absent).
func lossDrops() int {
	out, err := output("nft", "list", "table", "bridge", nftTable)
	if err != nil {
		return 0
	}
	total := 0
	for _, f := range strings.Split(out, "counter packets ")[1:] {
		var n int
		fmt.Sscanf(f, "%d", &n)
		total += n
	}
	return total
}
