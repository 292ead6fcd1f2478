package gorxe

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
)

// TestE2EMulticastUDPLoopback sends UD datagrams to an IPv4 multicast group over real UDP
// sockets: two QPs of the device on 127.0.0.2 attach to the group (one IP membership between
// them), the device on 127.0.0.1 sends to the group's GID, and each attached QP gets a copy.
func TestE2EMulticastUDPLoopback(t *testing.T) {
	port := loopbackPort(t)
	a := newNode(t, openUDP(t, "127.0.0.1", port))
	b := newNode(t, openUDP(t, "127.0.0.2", port))
	ua, ub := udPair(t, a, b)
	_, ub2 := udPair(t, a, b)
	group := GIDFromAddr(netip.AddrFrom4([4]byte{239, 78, byte(port >> 8), byte(port)}))
	assert.Equal(t, "::ffff:239.78."+netip.AddrFrom4([4]byte{0, 0, byte(port >> 8), byte(port)}).String()[4:], netip.AddrFrom16(group).String(),
		"an IPv4 group's GID is IPv4-mapped")

	err := ub.AttachMcast(group, 0)
	var sysErr *os.SyscallError
	if errors.As(err, &sysErr) {
		t.Skipf("the kernel refuses to join %v on loopback: %v", group, err)
	}
	require.NoError(t, err)
	require.NoError(t, ub2.AttachMcast(group, 0))
	assert.Equal(t, uint64(1), b.d.Counters().Get(counter.NetMcastJoins), "two QPs, one membership")

	const grh, off = 40, 600000
	msg := []byte("a datagram for the group")
	copy(a.buf[off:], msg)
	for i, q := range []*QP{ub, ub2} {
		require.NoError(t, q.PostRecv([]RecvWR{{ID: uint64(60 + i), SGList: b.sge(off+i*2048, grh+1024)}}))
	}
	ah, err := a.pd.CreateAH(&AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: group, SGIDIndex: 1, HopLimit: 64}})
	require.NoError(t, err)
	defer ah.Destroy()
	require.NoError(t, ua.PostSend([]SendWR{{ID: 61, Opcode: WRSendWithImm, Flags: SendSignaled, SGList: a.sge(off, len(msg)),
		ImmData: 0x1234, UD: UDInfo{AH: ah, RemoteQPN: 0xFFFFFF, RemoteQKey: 0x11111111}}}))
	wc := a.wait(t, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status, "send completion %+v", wc)

	got := b.wait(t, 2)
	for _, wc := range got {
		assert.Equal(t, WCSuccess, wc.Status, "receive completion %+v", wc)
		assert.Equal(t, ua.QPN(), wc.SrcQP, "receive completion %+v", wc)
		assert.Equal(t, uint32(0x1234), wc.ImmData, "receive completion %+v", wc)
		assert.Equal(t, uint32(grh+len(msg)), wc.ByteLen, "receive completion %+v", wc)
		i := int(wc.WRID - 60)
		buf := b.buf[off+i*2048:]
		// For IPv4, the GRH area holds the IPv4 header in its last 20 bytes, as rxe writes it.
		assert.Equal(t, group[12:], buf[36:40], "the IPv4 header's destination is the group")
		assert.Equal(t, msg, buf[grh:grh+len(msg)])
	}
	assert.ElementsMatch(t, []uint32{ub.QPN(), ub2.QPN()}, []uint32{got[0].QPNum, got[1].QPNum}, "each attached QP gets a copy")

	require.NoError(t, ub.DetachMcast(group, 0))
	assert.Zero(t, b.d.Counters().Get(counter.NetMcastLeaves), "a QP is still attached")
	require.NoError(t, ub2.DetachMcast(group, 0))
	assert.Equal(t, uint64(1), b.d.Counters().Get(counter.NetMcastLeaves))
}

// The per-group limit holds against concurrent attaches.
func TestAttachMcastLimitConcurrent(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	x := newTestQPs(t, d)
	gid := GIDFromAddr(mustAddr("239.0.0.9"))
	var qps []*QP
	for range 64 {
		qps = append(qps, x.create(t, QPTypeUD))
	}
	var ok atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, q := range qps {
		wg.Go(func() {
			<-start
			if err := q.AttachMcast(gid, 0); err == nil {
				ok.Add(1)
			} else if !errors.Is(err, ErrInvalidArgument) {
				assert.Fail(t, fmt.Sprintf("attach: %v", err))
			}
		})
	}
	close(start)
	wg.Wait()
	attr, err := d.Query()
	require.NoError(t, err)
	assert.Equal(t, int32(attr.MaxMcastQPAttach), ok.Load())
}
