package gorxe

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/internal/netdev"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{"MTU out of enum", Config{Addr: addr, MTU: 6, Network: fabricNet(fab.fab)}, ErrInvalidConfig},
		{"negative workers", Config{Addr: addr, Workers: -1, Network: fabricNet(fab.fab)}, ErrInvalidConfig},
		{"bad faults", Config{Addr: addr, Faults: FaultConfig{Loss: 2}, Network: fabricNet(fab.fab)}, ErrInvalidConfig},
		{"no such interface", Config{Interface: "gorxe-does-not-exist0"}, ErrInvalidConfig},
		{"address of no interface", Config{Addr: netip.MustParseAddr("192.0.2.254")}, ErrNoAddresses},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Open(c.cfg)
			if err == nil {
				d.Close()
				t.Fatalf("Open succeeded, want %v", c.want)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Open: %v, want errors.Is %v", err, c.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Op != "open" {
				t.Fatalf("Open: %#v is not an *Error for op open", err)
			}
		})
	}
}

func TestOpenFaultsFromEnv(t *testing.T) {
	fab := newTestFabric(t)
	t.Setenv("GORXE_FAULTS", "loss=banana")
	_, err := Open(Config{Addr: netip.MustParseAddr("10.0.0.1"), Network: fabricNet(fab.fab)})
	require.ErrorIs(t, err, ErrInvalidConfig, "Open with a bad GORXE_FAULTS")
	t.Setenv("GORXE_FAULTS", "loss=0.5,seed=3")
	cfg := Config{Addr: netip.MustParseAddr("10.0.0.1"), Network: fabricNet(fab.fab)}
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
		if got := activeMTU(c.ifMTU); got != c.want {
			t.Errorf("activeMTU(%d) = %v, want %v", c.ifMTU, got, c.want)
		}
	}
}

func TestLoopbackAddrDevice(t *testing.T) {
	d := openUDP(t, "127.0.0.1", freeUDPPort(t))
	if d.Name() != "gorxe_127.0.0.1" || d.NetDev() != "lo" {
		t.Errorf("Name %q NetDev %q, want gorxe_127.0.0.1 on lo", d.Name(), d.NetDev())
	}
	tbl := d.GIDTable()
	if len(tbl) != 2 {
		t.Fatalf("GID table %v, want 2 entries", tbl)
	}
	if g := tbl[1].GID; g.Addr() != netip.MustParseAddr("127.0.0.1") || g.String() != "0000:0000:0000:0000:0000:ffff:7f00:0001" || !tbl[1].Usable {
		t.Errorf("GID index 1 = %+v, want usable ::ffff:127.0.0.1", tbl[1])
	}
	// Loopback has no MAC: index 0 comes from a locally administered MAC built from the address,
	// and the device has no socket on it.
	if g := tbl[0].GID; g.String() != "fe80:0000:0000:0000:0000:7fff:fe00:0001" || tbl[0].Usable {
		t.Errorf("GID index 0 = %+v (%v), want unusable fe80::7fff:fe00:1", tbl[0], g)
	}
	g, err := d.QueryGID(1)
	if err != nil || g != tbl[1].GID {
		t.Errorf("QueryGID(1) = %v, %v", g, err)
	}
	pa, err := d.QueryPort(1)
	require.NoError(t, err)
	if pa.ActiveMTU != MTU4096 || pa.MaxMTU != MTU4096 {
		t.Errorf("loopback MTUs active %v max %v, want 4096/4096", pa.ActiveMTU, pa.MaxMTU)
	}
	da, _ := d.Query()
	if da.NodeGUID != 0x00007ffffe000001 {
		t.Errorf("NodeGUID %#x, want 0x00007ffffe000001", da.NodeGUID)
	}
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
	if d.Name() != "gorxe_"+ifi.Name {
		t.Errorf("Name %q", d.Name())
	}
	tbl := d.GIDTable()
	want0 := netdev.LinkLocal(ifi.HardwareAddr)
	if tbl[0].GID.Addr() != want0 {
		t.Errorf("GID index 0 = %v, want %v from MAC %v", tbl[0].GID.Addr(), want0, ifi.HardwareAddr)
	}
	seen6 := false
	for _, e := range tbl[1:] {
		is4 := e.GID.Addr().Is4()
		if is4 && seen6 {
			t.Errorf("IPv4 GID %v after an IPv6 one: %v", e.GID, tbl)
		}
		seen6 = seen6 || !is4
		if e.NetDev != ifi.Name || !e.Usable {
			t.Errorf("entry %+v", e)
		}
	}
	pa, _ := d.QueryPort(1)
	if want := MTUFromBytes(ifi.MTU - 80); pa.ActiveMTU != want {
		t.Errorf("ActiveMTU %v, want %v for interface MTU %d", pa.ActiveMTU, want, ifi.MTU)
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
	if a.VendorID != 0xffffff || a.MaxQP != 1<<20-16 || a.MaxQPWR != 1<<20 || a.MaxSGE != 32 || a.MaxSGERd != 32 ||
		a.MaxCQ != 1<<20 || a.MaxCQE != 32767 || a.MaxMR != 1<<19 || a.MaxPD != 1<<20 || a.MaxQPRdAtom != 128 ||
		a.MaxQPInitRdAtom != 128 || a.MaxResRdAtom != 0x3f000 || a.AtomicCap != AtomicHCA || a.MaxMW != 1<<19 ||
		a.MaxMcastGrp != 8192 || a.MaxMcastQPAttach != 56 || a.MaxTotalMcastQPAttach != 0x70000 || a.MaxAH != 32767 ||
		a.MaxSRQ != 1<<20 || a.MaxSRQWR != 1<<20 || a.MaxSRQSGE != 27 || a.MaxPKeys != 64 || a.LocalCAAckDelay != 15 ||
		a.PhysPortCnt != 1 || a.MaxMRSize != ^uint64(0) || a.PageSizeCap != 0xfffff000 || a.MaxFastRegPageList != 512 ||
		a.MaxInlineData != 512 {
		t.Errorf("device attributes differ from rxe's defaults: %+v", a)
	}
	if a.DeviceCapFlags != deviceCapFlagsOfGorxe || a.DeviceCapFlags&DeviceMemWindowType2B == 0 || a.DeviceCapFlags&DeviceXRC != 0 {
		t.Errorf("DeviceCapFlags %#x", a.DeviceCapFlags)
	}
	p, err := d.QueryPort(1)
	require.NoError(t, err)
	want := PortAttr{State: PortActive, MaxMTU: MTU4096, ActiveMTU: MTU4096, GIDTblLen: 1024, PortCapFlags: PortCMSup,
		MaxMsgSz: 1 << 31, PKeyTblLen: 1, MaxVLNum: 1, ActiveWidth: 1, ActiveSpeed: 1, PhysState: 5, LinkLayer: LinkLayerEthernet}
	if p != want {
		t.Errorf("QueryPort = %+v\nwant         %+v", p, want)
	}
	if pk, err := d.QueryPKey(0); pk != 0xFFFF || err != nil {
		t.Errorf("QueryPKey(0) = %#x, %v", pk, err)
	}
}

func TestQueryMisuse(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	if _, err := d.QueryPort(2); !errors.Is(err, ErrInvalidPort) {
		t.Errorf("QueryPort(2): %v", err)
	}
	if _, err := d.QueryPort(0); !errors.Is(err, ErrInvalidPort) {
		t.Errorf("QueryPort(0): %v", err)
	}
	for _, i := range []int{-1, 2, 1000} {
		if _, err := d.QueryGID(i); !errors.Is(err, ErrInvalidGIDIndex) {
			t.Errorf("QueryGID(%d): %v", i, err)
		}
	}
	if _, err := d.QueryPKey(1); !errors.Is(err, ErrInvalidPKeyIndex) {
		t.Errorf("QueryPKey(1): %v", err)
	}
}

func TestConfigMTUCapsActiveMTU(t *testing.T) {
	f := newTestFabric(t)
	d, err := Open(Config{Addr: netip.MustParseAddr("10.0.0.9"), Network: fabricNet(f.fab), Clock: f.clk, MTU: MTU1024})
	require.NoError(t, err)
	defer d.Close()
	if p, _ := d.QueryPort(1); p.ActiveMTU != MTU1024 {
		t.Errorf("ActiveMTU %v, want 1024", p.ActiveMTU)
	}
}

func TestCloseTwiceAndVerbsAfterClose(t *testing.T) {
	f := newTestFabric(t)
	d := f.open(t, "10.0.0.1")
	pd, err := d.AllocPD()
	require.NoError(t, err)
	c, err := d.CreateCQ(4, nil)
	require.NoError(t, err)
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
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
		if !errors.Is(err, ErrDeviceClosed) {
			t.Errorf("%s after Close: %v, want ErrDeviceClosed", name, err)
		}
	}
	if n := c.Poll(make([]WC, 4)); n != 0 {
		t.Errorf("Poll after Close = %d", n)
	}
}

func TestAsyncEventsPortActiveAndClose(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := d.GetAsyncEvent(ctx)
	if err != nil || ev.Type != EventPortActive || ev.Port != 1 {
		t.Fatalf("first event %+v, %v; want port active on port 1", ev, err)
	}
	expired, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := d.GetAsyncEvent(expired); !errors.Is(err, context.Canceled) {
		t.Errorf("GetAsyncEvent with a cancelled context: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := d.GetAsyncEvent(context.Background())
		done <- err
	}()
	d.Close()
	assert.ErrorIs(t, <-done, ErrDeviceClosed, "GetAsyncEvent across Close")
	if EventPortActive.String() != "port active" || EventQPLastWQEReached.String() != "last WQE reached" || EventType(99).String() != "unknown" {
		t.Errorf("event names")
	}
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
		"net_gso_sends", "net_gso_segments", "net_gro_reads", "net_gro_segments", "net_gso_fallbacks", "net_gro_fallbacks"} {
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
