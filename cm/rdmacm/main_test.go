package rdmacm

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/internal/fabrictest"
	"github.com/gorxe/gorxe/netio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fastCM makes a lost MAD cost tens of milliseconds instead of seconds: response timeout 2^14 ×
// 4.096 µs ≈ 67 ms, packet lifetime and ACK delay short enough that timewait is a few ms.
var fastCM = Config{CM: cm.Config{CMResponseTimeout: 14, PacketLifeTime: 8, CAAckDelay: 8}}

// testWait and testTick bound the polling of state that has no event to wait on.
const (
	testWait = 30 * time.Second
	testTick = time.Millisecond
)

// testCtx bounds a test's waiting; it is generous because the machine may be loaded.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fabricDevices opens devices on one in-memory fabric (real clock); wrap, when set, wraps each
// device's network connection.
func fabricDevices(t *testing.T, wrap func(netio.Conn) netio.Conn, addrs ...string) []*gorxe.Device {
	t.Helper()
	fab := netio.NewFabric(netio.FabricConfig{})
	t.Cleanup(fab.Close)
	return openOn(t, fab, wrap, addrs...)
}

// openOn opens devices on fab.
func openOn(t *testing.T, fab *netio.Fabric, wrap func(netio.Conn) netio.Conn, addrs ...string) []*gorxe.Device {
	t.Helper()
	return fabrictest.Devices(t, fab, fabrictest.Options{Config: gorxe.Config{Workers: 2}, Wrap: wrap}, addrs...)
}

// agents opens a fast agent on each device, closed when the test ends.
func agents(t *testing.T, devs ...*gorxe.Device) []*Agent {
	var as []*Agent
	for _, d := range devs {
		a, err := Open(d, fastCM)
		require.NoError(t, err)
		t.Cleanup(func() { a.Close() })
		as = append(as, a)
	}
	return as
}
