package gorxe

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gorxe/gorxe/clock"
	"github.com/gorxe/gorxe/netio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fabricNet returns a NetworkFunc attaching devices to fab.
func fabricNet(fab *netio.Fabric) NetworkFunc {
	return func(addrs []netip.Addr, port uint16) (Network, error) {
		return fab.NewEndpoint(port, addrs...)
	}
}

// testFabric is an in-memory network with a fake clock, shared by the devices of one test.
type testFabric struct {
	fab *netio.Fabric
	clk *clock.Fake
}

func newTestFabric(t testing.TB) *testFabric {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	fab := netio.NewFabric(netio.FabricConfig{Clock: clk})
	t.Cleanup(fab.Close)
	return &testFabric{fab: fab, clk: clk}
}

// open opens a device at addr on the fabric and closes it when the test ends.
func (f *testFabric) open(t testing.TB, addr string) *Device {
	t.Helper()
	d, err := Open(Config{Addr: netip.MustParseAddr(addr), Network: fabricNet(f.fab), Clock: f.clk, Workers: 2})
	require.NoError(t, err, "Open(%s)", addr)
	t.Cleanup(func() { d.Close() })
	return d
}

// freeUDPPort returns a UDP port that is free on every loopback address right now.
func freeUDPPort(t testing.TB) uint16 {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err, "finding a free port")
	defer c.Close()
	return uint16(c.LocalAddr().(*net.UDPAddr).Port)
}

// openUDP opens a device on a real UDP socket at addr and closes it when the test ends.
func openUDP(t testing.TB, addr string, port uint16) *Device {
	t.Helper()
	d, err := Open(Config{Addr: netip.MustParseAddr(addr), Port: port, Workers: 2})
	require.NoError(t, err, "Open(%s:%d)", addr, port)
	t.Cleanup(func() { d.Close() })
	return d
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
