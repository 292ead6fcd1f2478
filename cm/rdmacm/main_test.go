package rdmacm

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/internal/fabrictest"
	"github.com/gorxe/gorxe/netio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Every test runs in a testing/synctest bubble: the fabric, the devices and their agents run on
// the bubble's clock, which jumps to the next timer whenever every goroutine of the test waits.
// A lost MAD, a retransmission or a timeout then costs no real time, and a test waits in real
// time only for the work itself, however loaded the machine.

// fastCM shortens the protocol's timeouts: response timeout 2^14 × 4.096 µs ≈ 67 ms, packet
// lifetime and ACK delay short enough that timewait is a few ms (of the bubble's time).
var fastCM = Config{CM: cm.Config{CMResponseTimeout: 14, PacketLifeTime: 8, CAAckDelay: 8}}

// testCtx bounds a test's waiting on the bubble's clock: a test that hangs fails once every
// goroutine waits and the bubble's time reaches the bound, at once in real time.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// inBubble runs f as a subtest in a bubble of its own (synctest.Test forbids t.Run inside one).
func inBubble(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) { synctest.Test(t, f) })
}

// fabricDevices opens devices on one in-memory fabric; wrap, when set, wraps each device's
// network connection.
func fabricDevices(t *testing.T, wrap func(netio.Conn) netio.Conn, addrs ...string) []*gorxe.Device {
	t.Helper()
	fab := netio.NewFabric(netio.FabricConfig{})
	t.Cleanup(fab.Close)
	return openOn(t, fab, wrap, addrs...)
}

// twoAgents opens fast agents on a client and a server device.
func twoAgents(t *testing.T) []*Agent {
	return agents(t, fabricDevices(t, nil, clientAddr, serverAddr.Addr().String())...)
}

// serverListener listens on a at serverAddr, until the test ends.
func serverListener(t *testing.T, ctx context.Context, a *Agent, opts *Options) *Listener {
	t.Helper()
	l, err := a.Listen(ctx, serverAddr, opts)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
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
