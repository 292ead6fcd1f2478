// Package fabrictest is the tests' fixture of gorxe devices on an in-memory fabric: it opens N
// devices on one fabric (Devices), and runs small, known UD exchanges between them (Open, Exchange)
// for the tests of the packages that report on devices (metrics, the tools' counters and stats).
// The root package's own tests cannot import it (it imports the root) and keep their own.
package fabrictest

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/netio"
)

// QKey is the Q_Key of every QP and send.
const QKey = 0x11111111

// Node is a device on an in-memory fabric with what UD traffic needs: a PD, a CQ with its channel,
// a registered buffer and the device's IPv4 GID.
type Node struct {
	Dev *gorxe.Device
	pd  *gorxe.PD
	ch  *gorxe.CompChannel
	cq  *gorxe.CQ
	buf []byte
	mr  *gorxe.MR
	gid gorxe.GID
}

// Options say how Devices opens its devices.
type Options struct {
	// Config is the template of every device's configuration. Devices sets Addr and Network, and
	// Workers to 1 when it is zero (enough for a test's traffic, and the cheapest to start).
	Config gorxe.Config
	// Wrap, when set, wraps each device's endpoint on the fabric, e.g. in a dropper or a recorder.
	Wrap func(netio.Conn) netio.Conn
}

// Devices opens a device at each of addrs on fab, closed when the test ends.
func Devices(t testing.TB, fab *netio.Fabric, o Options, addrs ...string) []*gorxe.Device {
	t.Helper()
	cfg := o.Config
	if cfg.Workers == 0 {
		cfg.Workers = 1
	}
	cfg.Network = fab.Network()
	if o.Wrap != nil {
		attach := cfg.Network
		cfg.Network = func(addrs []netip.Addr, port uint16) (netio.Conn, error) {
			c, err := attach(addrs, port)
			if err != nil {
				return nil, err
			}
			return o.Wrap(c), nil
		}
	}
	devs := make([]*gorxe.Device, 0, len(addrs))
	for _, addr := range addrs {
		cfg.Addr = netip.MustParseAddr(addr)
		d, err := gorxe.Open(cfg)
		require.NoError(t, err, "open a device at %s", addr)
		t.Cleanup(func() { d.Close() })
		devs = append(devs, d)
	}
	return devs
}

// Open opens device name at addr on fab, closed when the test ends, with a PD, a CQ and a
// registered buffer for UD traffic.
func Open(t testing.TB, fab *netio.Fabric, name, addr string) *Node {
	t.Helper()
	dev := Devices(t, fab, Options{Config: gorxe.Config{Name: name}}, addr)[0]
	n := &Node{Dev: dev, buf: make([]byte, 1<<16), gid: gorxe.GIDFromAddr(netip.MustParseAddr(addr))}
	var err error
	n.pd, err = dev.AllocPD()
	require.NoError(t, err)
	n.ch, err = dev.CreateCompChannel()
	require.NoError(t, err)
	n.cq, err = dev.CreateCQ(4096, n.ch)
	require.NoError(t, err)
	n.mr, err = n.pd.RegMR(n.buf, gorxe.AccessLocalWrite)
	require.NoError(t, err)
	return n
}

// UDQP creates a UD QP and brings it to RTS.
func (n *Node) UDQP(t testing.TB) *gorxe.QP {
	t.Helper()
	q, err := n.Dev.CreateQP(n.pd, &gorxe.QPInitAttr{SendCQ: n.cq, RecvCQ: n.cq, QPType: gorxe.QPTypeUD,
		Cap: gorxe.QPCap{MaxSendWR: 16, MaxRecvWR: 1024, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(t, err)
	require.NoError(t, q.Modify(&gorxe.QPAttr{State: gorxe.QPStateInit, PortNum: 1, QKey: QKey},
		gorxe.QPAttrState|gorxe.QPAttrPKeyIndex|gorxe.QPAttrPort|gorxe.QPAttrQKey))
	require.NoError(t, q.Modify(&gorxe.QPAttr{State: gorxe.QPStateRTR}, gorxe.QPAttrState))
	require.NoError(t, q.Modify(&gorxe.QPAttr{State: gorxe.QPStateRTS}, gorxe.QPAttrState|gorxe.QPAttrSQPSN))
	return q
}

// PostRecvs posts k receives of gorxe.GRHSize plus 1024 bytes to q.
func (n *Node) PostRecvs(t testing.TB, q *gorxe.QP, k int) {
	t.Helper()
	for range k {
		require.NoError(t, q.PostRecv([]gorxe.RecvWR{{ID: 1, SGList: []gorxe.SGE{{Addr: n.mr.Addr(), Length: gorxe.GRHSize + 1024, LKey: n.mr.LKey()}}}}))
	}
}

// Send sends one datagram of size bytes from q to QP dqpn of peer and waits for its completion.
func (n *Node) Send(t testing.TB, q *gorxe.QP, peer *Node, dqpn uint32, size int) {
	t.Helper()
	ah, err := n.pd.CreateAH(&gorxe.AHAttr{IsGlobal: true, PortNum: 1,
		GRH: gorxe.GlobalRoute{DGID: peer.gid, SGIDIndex: 1, HopLimit: 64}})
	require.NoError(t, err)
	defer ah.Destroy()
	require.NoError(t, q.PostSend([]gorxe.SendWR{{ID: 2, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled,
		SGList: []gorxe.SGE{{Addr: n.mr.Addr(), Length: uint32(size), LKey: n.mr.LKey()}},
		UD:     gorxe.UDInfo{AH: ah, RemoteQPN: dqpn, RemoteQKey: QKey}}}))
	n.WaitOne(t)
}

// WaitOne takes one successful completion from n's CQ, sleeping on its channel until there is one.
func (n *Node) WaitOne(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wc := make([]gorxe.WC, 1)
	for n.cq.Poll(wc) == 0 {
		require.NoError(t, n.cq.ReqNotify(false))
		if n.cq.Poll(wc) > 0 { // it arrived before the CQ was armed
			break
		}
		c, err := n.ch.GetEvent(ctx)
		require.NoError(t, err, "waiting for a completion")
		c.AckEvents(1)
	}
	require.Equal(t, gorxe.WCSuccess, wc[0].Status)
}

// Exchange opens devices gorxe_a (10.0.0.1) and gorxe_b (10.0.0.2) on a new fabric and sends one
// datagram of size bytes from a UD QP of gorxe_a to one of gorxe_b, waiting for both completions.
// It returns the nodes and the two QPs; a knows 1 packet and size bytes sent, b as many received.
// The devices are closed by then (see Settle), so their counters are final.
func Exchange(t testing.TB, size int) (a, b *Node, qa, qb *gorxe.QP) {
	t.Helper()
	fab := netio.NewFabric(netio.FabricConfig{})
	t.Cleanup(fab.Close)
	a, b = Open(t, fab, "gorxe_a", "10.0.0.1"), Open(t, fab, "gorxe_b", "10.0.0.2")
	qa, qb = a.UDQP(t), b.UDQP(t)
	b.PostRecvs(t, qb, 1)
	a.Send(t, qa, b, qb.QPN(), size)
	b.WaitOne(t)
	Settle(t, a, b)
	return a, b, qa, qb
}

// Settle closes the nodes' devices, which waits for every engine run to end: a completion can
// reach its CQ before the engine that made it has counted it, so counters are exact only then.
// Counters, and the QPs' counters, stay readable after Close.
func Settle(t testing.TB, nodes ...*Node) {
	t.Helper()
	for _, n := range nodes {
		require.NoError(t, n.Dev.Close())
	}
}
