package metrics_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/netio"
)

const testQKey = 0x11111111

// udNode is a device on an in-memory fabric with what UD traffic needs: a PD, a CQ, a registered
// buffer and the device's IPv4 GID.
type udNode struct {
	dev *gorxe.Device
	pd  *gorxe.PD
	ch  *gorxe.CompChannel
	cq  *gorxe.CQ
	buf []byte
	mr  *gorxe.MR
	gid gorxe.GID
}

func openNode(t *testing.T, fab *netio.Fabric, name, addr string) *udNode {
	t.Helper()
	a := netip.MustParseAddr(addr)
	dev, err := gorxe.Open(gorxe.Config{Name: name, Addr: a, Workers: 1,
		Network: func(addrs []netip.Addr, port uint16) (netio.Conn, error) { return fab.NewEndpoint(port, addrs...) }})
	require.NoError(t, err)
	t.Cleanup(func() { dev.Close() })
	n := &udNode{dev: dev, buf: make([]byte, 1<<16), gid: gorxe.GIDFromAddr(a)}
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

// udQP creates a UD QP and brings it to RTS.
func (n *udNode) udQP(t *testing.T) *gorxe.QP {
	t.Helper()
	q, err := n.dev.CreateQP(n.pd, &gorxe.QPInitAttr{SendCQ: n.cq, RecvCQ: n.cq, QPType: gorxe.QPTypeUD,
		Cap: gorxe.QPCap{MaxSendWR: 16, MaxRecvWR: 1024, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(t, err)
	require.NoError(t, q.Modify(&gorxe.QPAttr{State: gorxe.QPStateInit, PortNum: 1, QKey: testQKey},
		gorxe.QPAttrState|gorxe.QPAttrPKeyIndex|gorxe.QPAttrPort|gorxe.QPAttrQKey))
	require.NoError(t, q.Modify(&gorxe.QPAttr{State: gorxe.QPStateRTR}, gorxe.QPAttrState))
	require.NoError(t, q.Modify(&gorxe.QPAttr{State: gorxe.QPStateRTS}, gorxe.QPAttrState|gorxe.QPAttrSQPSN))
	return q
}

// postRecvs posts k receives of 40 bytes of GRH plus 1024 bytes to q.
func (n *udNode) postRecvs(t *testing.T, q *gorxe.QP, k int) {
	t.Helper()
	for range k {
		require.NoError(t, q.PostRecv([]gorxe.RecvWR{{ID: 1, SGList: []gorxe.SGE{{Addr: n.mr.Addr(), Length: 1064, LKey: n.mr.LKey()}}}}))
	}
}

// send sends one datagram of size bytes from q to QP dqpn of peer and waits for its completion.
func (n *udNode) send(t *testing.T, q *gorxe.QP, peer *udNode, dqpn uint32, size int) {
	t.Helper()
	ah, err := n.pd.CreateAH(&gorxe.AHAttr{IsGlobal: true, PortNum: 1,
		GRH: gorxe.GlobalRoute{DGID: peer.gid, SGIDIndex: 1, HopLimit: 64}})
	require.NoError(t, err)
	defer ah.Destroy()
	require.NoError(t, q.PostSend([]gorxe.SendWR{{ID: 2, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled,
		SGList: []gorxe.SGE{{Addr: n.mr.Addr(), Length: uint32(size), LKey: n.mr.LKey()}},
		UD:     gorxe.UDInfo{AH: ah, RemoteQPN: dqpn, RemoteQKey: testQKey}}}))
	n.waitOne(t)
}

// waitOne takes one successful completion from n's CQ, sleeping on its channel until there is one.
func (n *udNode) waitOne(t *testing.T) {
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
