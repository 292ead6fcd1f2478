package gorxe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/internal/netdev"
)

func TestOpenConfigErrors(t *testing.T) {
	fab := newTestFabric(t)
	addr := netip.MustParseAddr("10.0.0.1")
	cases := []struct {
		name string
		cfg  Config
		want error
	}{
		{"neither Addr nor Interface", Config{}, ErrInvalidConfig},
		{"both Addr and Interface", Config{Addr: addr, Interface: "lo"}, ErrInvalidConfig},
		{"unspecified address", Config{Addr: netip.IPv4Unspecified()}, ErrInvalidConfig},
		{"multicast address", Config{Addr: netip.MustParseAddr("239.1.1.1")}, ErrInvalidConfig},
		{"MTU out of enum", Config{Addr: addr, MTU: 6, Network: fab.fab.Network()}, ErrInvalidConfig},
		{"negative workers", Config{Addr: addr, Workers: -1, Network: fab.fab.Network()}, ErrInvalidConfig},
		{"bad faults", Config{Addr: addr, Faults: FaultConfig{Loss: 2}, Network: fab.fab.Network()}, ErrInvalidConfig},
		{"no such interface", Config{Interface: "gorxe-does-not-exist0"}, ErrInvalidConfig},
		{"address of no interface", Config{Addr: netip.MustParseAddr("192.0.2.254")}, ErrNoAddresses},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Open(c.cfg)
			if err == nil {
				d.Close()
				require.Fail(t, fmt.Sprintf("Open succeeded, want %v", c.want))
			}
			require.ErrorIs(t, err, c.want, "Open: %v, want errors.Is %v", err, c.want)
			var e *Error
			require.ErrorAs(t, err, &e, "Open: %#v is not an *Error for op open", err)
			require.Equal(t, "open", e.Op, "Open: %#v is not an *Error for op open", err)
		})
	}
}

func TestOpenFaultsFromEnv(t *testing.T) {
	fab := newTestFabric(t)
	t.Setenv("GORXE_FAULTS", "loss=banana")
	_, err := Open(Config{Addr: netip.MustParseAddr("10.0.0.1"), Network: fab.fab.Network()})
	require.ErrorIs(t, err, ErrInvalidConfig, "Open with a bad GORXE_FAULTS")
	t.Setenv("GORXE_FAULTS", "loss=0.5,seed=3")
	cfg := Config{Addr: netip.MustParseAddr("10.0.0.1"), Network: fab.fab.Network()}
	rc, err := cfg.resolve()
	require.NoError(t, err)
	c, err := openConn(rc, rc.log, []netip.Addr{cfg.Addr}, nil)
	require.NoError(t, err)
	defer c.Close()
	_, ok := c.(interface{ InFlight() int })
	assert.True(t, ok, "conn is %T, want the fault-injecting wrapper", c)
}

func TestActiveMTU(t *testing.T) {
	for _, c := range []struct {
		ifMTU int
		want  MTU
	}{
		{0, MTU4096}, {65536, MTU4096}, {9000, MTU4096}, {4176, MTU4096}, {4175, MTU2048},
		{1500, MTU1024}, {1400, MTU1024}, {1103, MTU512}, {1104, MTU1024}, {576, MTU256}, {68, MTU256},
	} {
		got := activeMTU(c.ifMTU)
		assert.Equal(t, c.want, got, "activeMTU(%d) = %v, want %v", c.ifMTU, got, c.want)
	}
}

func TestLoopbackAddrDevice(t *testing.T) {
	d := openUDP(t, "127.0.0.1", freeUDPPort(t))
	assert.Equal(t, "gorxe_127.0.0.1", d.Name(), "Name %q NetDev %q, want gorxe_127.0.0.1 on lo", d.Name(), d.NetDev())
	assert.Equal(t, "lo", d.NetDev(), "Name %q NetDev %q, want gorxe_127.0.0.1 on lo", d.Name(), d.NetDev())
	tbl := d.GIDTable()
	require.Len(t, tbl, 2, "GID table %v, want 2 entries", tbl)
	if g := tbl[1].GID; g.Addr() != netip.MustParseAddr("127.0.0.1") || g.String() != "0000:0000:0000:0000:0000:ffff:7f00:0001" || !tbl[1].Usable {
		assert.Fail(t, fmt.Sprintf("GID index 1 = %+v, want usable ::ffff:127.0.0.1", tbl[1]))
	}
	// Loopback has no MAC: index 0 comes from a locally administered MAC built from the address,
	// and the device has no socket on it.
	if g := tbl[0].GID; g.String() != "fe80:0000:0000:0000:0000:7fff:fe00:0001" || tbl[0].Usable {
		assert.Fail(t, fmt.Sprintf("GID index 0 = %+v (%v), want unusable fe80::7fff:fe00:1", tbl[0], g))
	}
	g, err := d.QueryGID(1)
	assert.False(t, err != nil || g != tbl[1].GID, "QueryGID(1) = %v, %v", g, err)
	pa, err := d.QueryPort(1)
	require.NoError(t, err)
	assert.Equal(t, MTU4096, pa.ActiveMTU, "loopback MTUs active %v max %v, want 4096/4096", pa.ActiveMTU, pa.MaxMTU)
	assert.Equal(t, MTU4096, pa.MaxMTU, "loopback MTUs active %v max %v, want 4096/4096", pa.ActiveMTU, pa.MaxMTU)
	da, _ := d.Query()
	assert.Equal(t, uint64(0x00007ffffe000001), da.NodeGUID, "NodeGUID %#x, want 0x00007ffffe000001", da.NodeGUID)
}

// TestInterfaceDevice binds a device to a real non-loopback interface, if the machine has one with
// a MAC, and checks rxe's GID table layout: fe80::EUI-64(MAC) first, then IPv4, then IPv6.
func TestInterfaceDevice(t *testing.T) {
	ifi := pickInterface(t)
	d, err := Open(Config{Interface: ifi.Name, Port: freeUDPPort(t), Workers: 1})
	if err != nil {
		t.Skipf("cannot bind every address of %s: %v", ifi.Name, err)
	}
	defer d.Close()
	assert.Equal(t, "gorxe_"+ifi.Name, d.Name(), "Name %q", d.Name())
	tbl := d.GIDTable()
	want0 := netdev.LinkLocal(ifi.HardwareAddr)
	if tbl[0].GID.Addr() != want0 {
		assert.Fail(t, fmt.Sprintf("GID index 0 = %v, want %v from MAC %v", tbl[0].GID.Addr(), want0, ifi.HardwareAddr))
	}
	seen6 := false
	for _, e := range tbl[1:] {
		is4 := e.GID.Addr().Is4()
		assert.False(t, is4 && seen6, "IPv4 GID %v after an IPv6 one: %v", e.GID, tbl)
		seen6 = seen6 || !is4
		assert.Equal(t, ifi.Name, e.NetDev, "entry %+v", e)
		assert.True(t, e.Usable, "entry %+v", e)
	}
	pa, _ := d.QueryPort(1)
	if want := MTUFromBytes(ifi.MTU - 80); pa.ActiveMTU != want {
		assert.Fail(t, fmt.Sprintf("ActiveMTU %v, want %v for interface MTU %d", pa.ActiveMTU, want, ifi.MTU))
	}
}

func pickInterface(t *testing.T) *net.Interface {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Skip(err)
	}
	for i := range ifs {
		ifi := &ifs[i]
		if ifi.Flags&net.FlagUp == 0 || ifi.Flags&net.FlagLoopback != 0 || len(ifi.HardwareAddr) != 6 {
			continue
		}
		if b, err := netdev.ByInterface(ifi.Name); err == nil && len(b.Addrs) > 0 {
			return ifi
		}
	}
	t.Skip("no up, non-loopback interface with a MAC and an address")
	return nil
}

func TestQueryMatchesRxeDefaults(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	a, err := d.Query()
	require.NoError(t, err)
	assert.Equal(t, uint32(0xffffff), a.VendorID, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 1<<20-16, a.MaxQP, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 1<<20, a.MaxQPWR, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 32, a.MaxSGE, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 32, a.MaxSGERd, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 1<<20, a.MaxCQ, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 32767, a.MaxCQE, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 1<<19, a.MaxMR, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 1<<20, a.MaxPD, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 128, a.MaxQPRdAtom, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 128, a.MaxQPInitRdAtom, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 0x3f000, a.MaxResRdAtom, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, AtomicHCA, a.AtomicCap, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 1<<19, a.MaxMW, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 8192, a.MaxMcastGrp, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 56, a.MaxMcastQPAttach, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 0x70000, a.MaxTotalMcastQPAttach, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 32767, a.MaxAH, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 1<<20, a.MaxSRQ, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 1<<20, a.MaxSRQWR, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 27, a.MaxSRQSGE, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, uint16(64), a.MaxPKeys, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, uint8(15), a.LocalCAAckDelay, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, uint8(1), a.PhysPortCnt, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, ^uint64(0), a.MaxMRSize, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, uint64(0xfffff000), a.PageSizeCap, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 512, a.MaxFastRegPageList, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, 512, a.MaxInlineData, "device attributes differ from rxe's defaults: %+v", a)
	assert.Equal(t, deviceCapFlagsOfGorxe, a.DeviceCapFlags, "DeviceCapFlags %#x", a.DeviceCapFlags)
	assert.NotEqual(t, DeviceCapFlags(0), a.DeviceCapFlags&DeviceMemWindowType2B, "DeviceCapFlags %#x", a.DeviceCapFlags)
	assert.Equal(t, DeviceCapFlags(0), a.DeviceCapFlags&DeviceXRC, "DeviceCapFlags %#x", a.DeviceCapFlags)
	p, err := d.QueryPort(1)
	require.NoError(t, err)
	want := PortAttr{State: PortActive, MaxMTU: MTU4096, ActiveMTU: MTU4096, GIDTblLen: 1024, PortCapFlags: PortCMSup,
		MaxMsgSz: 1 << 31, PKeyTblLen: 1, MaxVLNum: 1, ActiveWidth: 1, ActiveSpeed: 1, PhysState: 5, LinkLayer: LinkLayerEthernet}
	assert.Equal(t, want, p, "QueryPort = %+v\nwant         %+v", p, want)
	if pk, err := d.QueryPKey(0); pk != 0xFFFF || err != nil {
		assert.Fail(t, fmt.Sprintf("QueryPKey(0) = %#x, %v", pk, err))
	}
}

func TestQueryMisuse(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	_, err := d.QueryPort(2)
	assert.ErrorIs(t, err, ErrInvalidPort, "QueryPort(2): %v", err)
	_, err = d.QueryPort(0)
	assert.ErrorIs(t, err, ErrInvalidPort, "QueryPort(0): %v", err)
	for _, i := range []int{-1, 2, 1000} {
		_, err := d.QueryGID(i)
		assert.ErrorIs(t, err, ErrInvalidGIDIndex, "QueryGID(%d): %v", i, err)
	}
	_, err = d.QueryPKey(1)
	assert.ErrorIs(t, err, ErrInvalidPKeyIndex, "QueryPKey(1): %v", err)
}

func TestConfigMTUCapsActiveMTU(t *testing.T) {
	f := newTestFabric(t)
	d, err := Open(Config{Addr: netip.MustParseAddr("10.0.0.9"), Network: f.fab.Network(), Clock: f.clk, MTU: MTU1024})
	require.NoError(t, err)
	defer d.Close()
	p, _ := d.QueryPort(1)
	assert.Equal(t, MTU1024, p.ActiveMTU, "ActiveMTU %v, want 1024", p.ActiveMTU)
}

func TestCloseTwiceAndVerbsAfterClose(t *testing.T) {
	f := newTestFabric(t)
	d := f.open(t, "10.0.0.1")
	pd, err := d.AllocPD()
	require.NoError(t, err)
	c, err := d.CreateCQ(4, nil)
	require.NoError(t, err)
	require.NoError(t, d.Close(), "Close")
	assert.ErrorIs(t, d.Close(), ErrDeviceClosed, "second Close")
	buf := make([]byte, 64)
	checks := map[string]error{}
	_, checks["AllocPD"] = d.AllocPD()
	_, checks["RegMR"] = pd.RegMR(buf, AccessLocalWrite)
	_, checks["CreateCQ"] = d.CreateCQ(4, nil)
	_, checks["CreateCompChannel"] = d.CreateCompChannel()
	_, checks["Query"] = d.Query()
	_, checks["QueryPort"] = d.QueryPort(1)
	_, checks["AllocMW"] = pd.AllocMW(MWType2)
	checks["Resize"] = c.Resize(8)
	for name, err := range checks {
		assert.ErrorIs(t, err, ErrDeviceClosed, "%s after Close: %v, want ErrDeviceClosed", name, err)
	}
	n := c.Poll(make([]WC, 4))
	assert.Equal(t, 0, n, "Poll after Close = %d", n)
}

func TestAsyncEventsPortActiveAndClose(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := d.GetAsyncEvent(ctx)
	require.NoError(t, err, "first event %+v, %v; want port active on port 1", ev, err)
	require.Equal(t, EventPortActive, ev.Type, "first event %+v, %v; want port active on port 1", ev, err)
	require.Equal(t, uint8(1), ev.Port, "first event %+v, %v; want port active on port 1", ev, err)
	expired, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := d.GetAsyncEvent(expired); !errors.Is(err, context.Canceled) {
		assert.Fail(t, fmt.Sprintf("GetAsyncEvent with a cancelled context: %v", err))
	}
	done := make(chan error, 1)
	go func() {
		_, err := d.GetAsyncEvent(context.Background())
		done <- err
	}()
	d.Close()
	assert.ErrorIs(t, <-done, ErrDeviceClosed, "GetAsyncEvent across Close")
	assert.Equal(t, "port active", EventPortActive.String(), "event names")
	assert.Equal(t, "last WQE reached", EventQPLastWQEReached.String(), "event names")
	assert.Equal(t, "unknown", EventType(99).String(), "event names")
}

func TestCountersNames(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	x := newTestQPs(t, d)
	q := x.create(t, QPTypeRC)
	var names []string
	for n, v := range d.Counters().All() {
		assert.Zero(t, v, "fresh device counter %s", n)
		names = append(names, n)
	}
	for _, want := range []string{"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err",
		"send_rnr_err", "rcvd_seq_err", "retry_exceeded_err", "retry_rnr_exceeded_err", "completer_retry_err",
		"rcvd_icrc_err", "rcvd_unknown_qpn", "rcvd_bad_pkey", "qkey_violation", "net_drop_no_route",
		"net_gso_sends", "net_gso_segments", "net_gro_reads", "net_gro_segments", "net_gso_fallbacks", "net_gro_fallbacks",
		"net_send_calls", "net_recv_calls", "net_recv_empty"} {
		assert.Contains(t, names, want)
	}
	assert.Len(t, names, int(counter.NumIDs))
	n := 0
	for range q.Counters().All() {
		n++
	}
	assert.Equal(t, int(counter.NumIDs), n, "a QP enumerates the same counters")
}

// TestUnusableGIDMessage checks that a GID index the device cannot send from is explained: past
// the table, not bound, or (on an interface) the EUI-64 link-local GID the interface lacks.
func TestUnusableGIDMessage(t *testing.T) {
	mac := net.HardwareAddr{0x52, 0x54, 0x00, 0x67, 0x78, 0x01}
	addrs := []netip.Addr{mustAddr("198.18.0.1"), mustAddr("fe80::1234:5678:9abc:def0")}
	usable := map[netip.Addr]bool{addrs[0]: true, addrs[1]: true}
	b := &netdev.Binding{NetDev: "eth9", MAC: mac, GIDs: netdev.GIDTable(mac, addrs, usable)}
	d := &Device{name: "gorxe_eth9", cfg: &resolved{Config: Config{Interface: "eth9"}}, bind: b, gids: gidEntries(b)}
	for i, want := range map[int]string{
		0: "sgid_index 0 is fe80::5054:ff:fe67:7801, the link-local GID derived from eth9's MAC, which eth9 does not have",
		3: "past the end of gorxe_eth9's GID table (3 entries)",
	} {
		assert.False(t, d.gidIndexUsable(i), "index %d", i)
		assert.Contains(t, d.unusableGID(i), want, "index %d", i)
	}
	assert.True(t, d.gidIndexUsable(2), "the interface's own link-local GID (index 2)")
	d.cfg.Interface, d.cfg.Addr = "", addrs[0]
	assert.Contains(t, d.unusableGID(0), "which gorxe_eth9 is not bound to")
}
