package gorxe

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/counter"
)

// node is one side of an end-to-end test: a device with a PD, a CQ on a completion channel and a
// registered buffer.
type node struct {
	d   *Device
	pd  *PD
	ch  *CompChannel
	cq  *CQ
	buf []byte
	mr  *MR
	gid GID
}

func newNode(t testing.TB, d *Device) *node {
	t.Helper()
	n := &node{d: d}
	var err error
	if n.pd, err = d.AllocPD(); err != nil {
		require.Fail(t, fmt.Sprint(err))
	}
	if n.ch, err = d.CreateCompChannel(); err != nil {
		require.Fail(t, fmt.Sprint(err))
	}
	if n.cq, err = d.CreateCQ(256, n.ch); err != nil {
		require.Fail(t, fmt.Sprint(err))
	}
	n.buf = make([]byte, 1<<20)
	if n.mr, err = n.pd.RegMR(n.buf, AccessLocalWrite|AccessRemoteWrite|AccessRemoteRead|AccessRemoteAtomic); err != nil {
		require.Fail(t, fmt.Sprint(err))
	}
	n.gid = d.GIDTable()[1].GID
	return n
}

func (n *node) qp(t testing.TB, typ QPType) *QP {
	t.Helper()
	q, err := n.d.CreateQP(n.pd, &QPInitAttr{SendCQ: n.cq, RecvCQ: n.cq, QPType: typ,
		Cap: QPCap{MaxSendWR: 128, MaxRecvWR: 128, MaxSendSGE: 2, MaxRecvSGE: 2, MaxInlineData: 64}})
	require.NoError(t, err)
	return q
}

// sge returns an SGE over n.buf[off:off+length].
func (n *node) sge(off, length int) []SGE {
	return []SGE{{Addr: n.mr.Addr() + uint64(off), Length: uint32(length), LKey: n.mr.LKey()}}
}

// wait collects want completions from n's CQ, sleeping on the completion channel in between.
func (n *node) wait(t testing.TB, want int) []WC {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []WC
	wcs := make([]WC, 32)
	for len(got) < want {
		k := n.cq.Poll(wcs)
		got = append(got, wcs[:k]...)
		if k > 0 {
			continue
		}
		require.NoError(t, n.cq.ReqNotify(false))
		// A completion may have arrived before the CQ was armed.
		if k = n.cq.Poll(wcs); k > 0 {
			got = append(got, wcs[:k]...)
			continue
		}
		c, err := n.ch.GetEvent(ctx)
		require.NoError(t, err, "waiting for %d completions, have %v", want, got)
		c.AckEvents(1)
	}
	return got
}

// rcPair connects an RC QP on a to one on b.
func rcPair(t testing.TB, a, b *node, mtu MTU) (*QP, *QP) {
	qa, qb := a.qp(t, QPTypeRC), b.qp(t, QPTypeRC)
	connectRC(t, qa, b.gid, qb.QPN(), 0x100, 0x200, mtu)
	connectRC(t, qb, a.gid, qa.QPN(), 0x200, 0x100, mtu)
	return qa, qb
}

func fabricPair(t *testing.T) (*node, *node) {
	f := newTestFabric(t)
	return newNode(t, f.open(t, "10.0.0.1")), newNode(t, f.open(t, "10.0.0.2"))
}

func TestE2EFabric(t *testing.T) {
	a, b := fabricPair(t)
	qa, qb := rcPair(t, a, b, MTU1024)
	ua, ub := udPair(t, a, b)
	t.Run("RCSendRecv", func(t *testing.T) { testSendRecv(t, a, b, qa, qb) })
	t.Run("RCWrite", func(t *testing.T) { testWrite(t, a, b, qa, qb) })
	t.Run("RCRead", func(t *testing.T) { testRead(t, a, b, qa) })
	t.Run("RCAtomics", func(t *testing.T) { testAtomics(t, a, b, qa) })
	t.Run("UDSend", func(t *testing.T) { testUDSend(t, a, b, ua, ub) })
}

// TestE2EUDPLoopback runs the same traffic over real UDP sockets on 127.0.0.1 and 127.0.0.2.
func TestE2EUDPLoopback(t *testing.T) {
	port := loopbackPort(t)
	a := newNode(t, openUDP(t, "127.0.0.1", port))
	b := newNode(t, openUDP(t, "127.0.0.2", port))
	qa, qb := rcPair(t, a, b, MTU4096)
	ua, ub := udPair(t, a, b)
	t.Run("RCSendRecv", func(t *testing.T) { testSendRecv(t, a, b, qa, qb) })
	t.Run("RCWrite", func(t *testing.T) { testWrite(t, a, b, qa, qb) })
	t.Run("RCRead", func(t *testing.T) { testRead(t, a, b, qa) })
	t.Run("RCAtomics", func(t *testing.T) { testAtomics(t, a, b, qa) })
	t.Run("UDSend", func(t *testing.T) { testUDSend(t, a, b, ua, ub) })
}

// loopbackPort returns 4791 when it is free on both loopback addresses, otherwise another port
// free on both.
func loopbackPort(t testing.TB) uint16 {
	t.Helper()
	free := func(p uint16) bool {
		var cs []*net.UDPConn
		defer func() {
			for _, c := range cs {
				c.Close()
			}
		}()
		for _, ip := range []string{"127.0.0.1", "127.0.0.2"} {
			c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(ip), p)))
			if err != nil {
				return false
			}
			cs = append(cs, c)
		}
		return true
	}
	if free(DefaultPort) {
		return DefaultPort
	}
	for range 20 {
		if p := freeUDPPort(t); free(p) {
			return p
		}
	}
	t.Skip("no UDP port free on both 127.0.0.1 and 127.0.0.2")
	return 0
}

func testSendRecv(t *testing.T, a, b *node, qa, qb *QP) {
	for _, size := range []int{0, 5, 1024, 10000} {
		msg := bytes.Repeat([]byte{byte(size)}, size)
		copy(a.buf, msg)
		clear(b.buf[:size+16])
		require.NoError(t, qb.PostRecv([]RecvWR{{ID: 7, SGList: b.sge(0, 16384)}}))
		require.NoError(t, qa.PostSend([]SendWR{{ID: 8, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, size)}}))
		sw := a.wait(t, 1)[0]
		assert.Equal(t, WCSuccess, sw.Status, "size %d send completion %+v", size, sw)
		assert.Equal(t, WCSend, sw.Opcode, "size %d send completion %+v", size, sw)
		assert.Equal(t, uint64(8), sw.WRID, "size %d send completion %+v", size, sw)
		assert.Equal(t, qa.QPN(), sw.QPNum, "size %d send completion %+v", size, sw)
		rw := b.wait(t, 1)[0]
		assert.Equal(t, WCSuccess, rw.Status, "size %d receive completion %+v", size, rw)
		assert.Equal(t, WCRecv, rw.Opcode, "size %d receive completion %+v", size, rw)
		assert.Equal(t, uint64(7), rw.WRID, "size %d receive completion %+v", size, rw)
		assert.Equal(t, uint32(size), rw.ByteLen, "size %d receive completion %+v", size, rw)
		assert.Equal(t, qb.QPN(), rw.QPNum, "size %d receive completion %+v", size, rw)
		assert.Equal(t, msg, b.buf[:size], "size %d: received data differs", size)
	}
	// Inline data and immediate data.
	require.NoError(t, qb.PostRecv([]RecvWR{{ID: 9, SGList: b.sge(0, 64)}}))
	require.NoError(t, qa.PostSend([]SendWR{{ID: 10, Opcode: WRSendWithImm, Flags: SendSignaled | SendInline, InlineData: []byte("inline!"), ImmData: 0xdeadbeef}}))
	a.wait(t, 1)
	rw := b.wait(t, 1)[0]
	if rw.Status != WCSuccess || rw.ImmData != 0xdeadbeef || rw.WCFlags&WCFlagWithImm == 0 || string(b.buf[:rw.ByteLen]) != "inline!" {
		assert.Fail(t, fmt.Sprintf("send with immediate: %+v %q", rw, b.buf[:rw.ByteLen]))
	}
}

func testWrite(t *testing.T, a, b *node, qa, qb *QP) {
	data := make([]byte, 20000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	copy(a.buf[4096:], data)
	const dstOff = 100000
	wr := SendWR{ID: 20, Opcode: WRRDMAWrite, Flags: SendSignaled, SGList: a.sge(4096, len(data)),
		RDMA: RDMAInfo{RemoteAddr: b.mr.Addr() + dstOff, RKey: b.mr.RKey()}}
	require.NoError(t, qa.PostSend([]SendWR{wr}))
	wc := a.wait(t, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status, "write completion %+v", wc)
	assert.Equal(t, WCRDMAWrite, wc.Opcode, "write completion %+v", wc)
	assert.Equal(t, uint64(20), wc.WRID, "write completion %+v", wc)
	assert.Equal(t, data, b.buf[dstOff:dstOff+len(data)], "RDMA WRITE data differs")
	// WRITE with immediate consumes a receive and reports the immediate.
	require.NoError(t, qb.PostRecv([]RecvWR{{ID: 21}}))
	wr.ID, wr.Opcode, wr.ImmData, wr.SGList = 22, WRRDMAWriteWithImm, 0x01020304, a.sge(4096, 8)
	require.NoError(t, qa.PostSend([]SendWR{wr}))
	a.wait(t, 1)
	wc = b.wait(t, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status, "write with immediate, receive completion %+v", wc)
	assert.Equal(t, WCRecvRDMAWithImm, wc.Opcode, "write with immediate, receive completion %+v", wc)
	assert.Equal(t, uint32(0x01020304), wc.ImmData, "write with immediate, receive completion %+v", wc)
	assert.Equal(t, uint64(21), wc.WRID, "write with immediate, receive completion %+v", wc)
	// A bad rkey fails with a remote access error, and the QP goes to the error state.
}

func testRead(t *testing.T, a, b *node, qa *QP) {
	const srcOff, dstOff, size = 200000, 300000, 9000
	for i := range size {
		b.buf[srcOff+i] = byte(i*13 + 1)
	}
	clear(a.buf[dstOff : dstOff+size])
	require.NoError(t, qa.PostSend([]SendWR{{ID: 30, Opcode: WRRDMARead, Flags: SendSignaled, SGList: a.sge(dstOff, size),
		RDMA: RDMAInfo{RemoteAddr: b.mr.Addr() + srcOff, RKey: b.mr.RKey()}}}))
	wc := a.wait(t, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status, "read completion %+v", wc)
	assert.Equal(t, WCRDMARead, wc.Opcode, "read completion %+v", wc)
	assert.Equal(t, uint32(size), wc.ByteLen, "read completion %+v", wc)
	assert.Equal(t, b.buf[srcOff:srcOff+size], a.buf[dstOff:dstOff+size], "RDMA READ data differs")
}

func testAtomics(t *testing.T, a, b *node, qa *QP) {
	const word, result = 400000, 400064
	binary.LittleEndian.PutUint64(b.buf[word:], 40)
	require.NoError(t, qa.PostSend([]SendWR{{ID: 40, Opcode: WRAtomicFetchAndAdd, Flags: SendSignaled, SGList: a.sge(result, 8),
		Atomic: AtomicInfo{RemoteAddr: b.mr.Addr() + word, RKey: b.mr.RKey(), CompareAdd: 2}}}))
	wc := a.wait(t, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status, "fetch-add completion %+v", wc)
	assert.Equal(t, WCFetchAdd, wc.Opcode, "fetch-add completion %+v", wc)
	assert.Equal(t, uint32(8), wc.ByteLen, "fetch-add completion %+v", wc)
	got := binary.LittleEndian.Uint64(a.buf[result:])
	assert.Equal(t, uint64(40), got, "fetch-add returned %d, want 40", got)
	got = binary.LittleEndian.Uint64(b.buf[word:])
	assert.Equal(t, uint64(42), got, "after fetch-add the word is %d, want 42", got)
	require.NoError(t, qa.PostSend([]SendWR{{ID: 41, Opcode: WRAtomicCmpAndSwp, Flags: SendSignaled, SGList: a.sge(result, 8),
		Atomic: AtomicInfo{RemoteAddr: b.mr.Addr() + word, RKey: b.mr.RKey(), CompareAdd: 42, Swap: 7}}}))
	wc = a.wait(t, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status, "compare-swap completion %+v", wc)
	assert.Equal(t, WCCompSwap, wc.Opcode, "compare-swap completion %+v", wc)
	got, now := binary.LittleEndian.Uint64(a.buf[result:]), binary.LittleEndian.Uint64(b.buf[word:])
	assert.Equal(t, uint64(42), got, "compare-swap returned %d (want 42), word now %d (want 7)", got, now)
	assert.Equal(t, uint64(7), now, "compare-swap returned %d (want 42), word now %d (want 7)", got, now)
}

// udPair creates a UD QP on each node and brings both to RTS as ibv_ud_pingpong does.
func udPair(t *testing.T, a, b *node) (*QP, *QP) {
	t.Helper()
	var qs [2]*QP
	for i, n := range []*node{a, b} {
		q := n.qp(t, QPTypeUD)
		for _, s := range []struct {
			attr QPAttr
			mask QPAttrMask
		}{
			{QPAttr{State: QPStateInit, PortNum: 1, QKey: 0x11111111}, QPAttrState | QPAttrPKeyIndex | QPAttrPort | QPAttrQKey},
			{QPAttr{State: QPStateRTR}, QPAttrState},
			{QPAttr{State: QPStateRTS, SQPSN: 3}, QPAttrState | QPAttrSQPSN},
		} {
			require.NoError(t, q.Modify(&s.attr, s.mask))
		}
		qs[i] = q
	}
	return qs[0], qs[1]
}

func testUDSend(t *testing.T, a, b *node, ua, ub *QP) {
	ah, err := a.pd.CreateAH(&AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: b.gid, SGIDIndex: 1, HopLimit: 64}})
	require.NoError(t, err)
	defer ah.Destroy()
	const grh = 40
	msg := []byte("a datagram for the peer")
	copy(a.buf[500000:], msg)
	clear(b.buf[500000 : 500000+grh+len(msg)])
	require.NoError(t, ub.PostRecv([]RecvWR{{ID: 50, SGList: b.sge(500000, grh+1024)}}))
	require.NoError(t, ua.PostSend([]SendWR{{ID: 51, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(500000, len(msg)),
		UD: UDInfo{AH: ah, RemoteQPN: ub.QPN(), RemoteQKey: 0x11111111}}}))
	if wc := a.wait(t, 1)[0]; wc.Status != WCSuccess || wc.Opcode != WCSend || wc.WRID != 51 {
		assert.Fail(t, fmt.Sprintf("UD send completion %+v", wc))
	}
	wc := b.wait(t, 1)[0]
	assert.Equal(t, WCSuccess, wc.Status, "UD receive completion %+v", wc)
	assert.Equal(t, WCRecv, wc.Opcode, "UD receive completion %+v", wc)
	assert.Equal(t, ua.QPN(), wc.SrcQP, "UD receive completion %+v", wc)
	assert.NotEqual(t, WCFlags(0), wc.WCFlags&WCFlagGRH, "UD receive completion %+v", wc)
	assert.Equal(t, uint32(grh+len(msg)), wc.ByteLen, "UD receive completion %+v", wc)
	got := b.buf[500000+grh : 500000+grh+len(msg)]
	assert.Equal(t, msg, got, "UD payload %q", got)
}

// TestE2EUDPIPv6SelfLoop connects two RC QPs of one device bound to ::1, so every packet leaves
// and re-enters through the IPv6 socket, whose ICRCs are checked exactly.
func TestE2EUDPIPv6SelfLoop(t *testing.T) {
	c, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	port := uint16(c.LocalAddr().(*net.UDPAddr).Port)
	c.Close()
	n := newNode(t, openUDP(t, "::1", port))
	require.Equal(t, "0000:0000:0000:0000:0000:0000:0000:0001", n.gid.String(), "GID index 1 = %v", n.gid)
	qa, qb := rcPair(t, n, n, MTU4096)
	testSendRecvSelf(t, n, qa, qb)
	if c := n.d.Counters(); c.Get(counter.RcvdICRCErr) != 0 || c.Get(counter.RcvdPkts) == 0 {
		assert.Fail(t, fmt.Sprintf("counters %+v", c))
	}
}

// testSendRecvSelf sends one message between two QPs of the same node.
func testSendRecvSelf(t *testing.T, n *node, qa, qb *QP) {
	const size = 12000
	for i := range size {
		n.buf[i] = byte(i)
	}
	require.NoError(t, qb.PostRecv([]RecvWR{{ID: 1, SGList: n.sge(500000, size)}}))
	require.NoError(t, qa.PostSend([]SendWR{{ID: 2, Opcode: WRSend, Flags: SendSignaled, SGList: n.sge(0, size)}}))
	for _, wc := range n.wait(t, 2) {
		assert.Equal(t, WCSuccess, wc.Status, "completion %+v", wc)
	}
	assert.Equal(t, n.buf[500000:500000+size], n.buf[:size], "data differs")
}

// TestE2EUDPLoopbackOtherPort runs devices on a port other than 4791, as tests beside a running
// rxe must: both ends send to that port, and the ICRC covers it.
func TestE2EUDPLoopbackOtherPort(t *testing.T) {
	var port uint16
	for range 20 {
		if p := freeUDPPort(t); p != DefaultPort {
			port = p
			break
		}
	}
	a := newNode(t, openUDP(t, "127.0.0.1", port))
	b := newNode(t, openUDP(t, "127.0.0.2", port))
	qa, qb := rcPair(t, a, b, MTU1024)
	testSendRecv(t, a, b, qa, qb)
	testRead(t, a, b, qa)
	c := b.d.Counters()
	assert.Equal(t, uint64(0), c.Get(counter.RcvdICRCErr), "ICRC errors on port %d: %d", port, c.Get(counter.RcvdICRCErr))
}

// TestE2EBindMWType1 binds a type 1 window with QP.BindMW and has the peer read through it.
func TestE2EBindMWType1(t *testing.T) {
	a, b := fabricPair(t)
	qa, qb := rcPair(t, a, b, MTU1024)
	region, err := a.pd.RegMR(a.buf[600000:700000], AccessLocalWrite|AccessRemoteRead|AccessMWBind)
	require.NoError(t, err)
	mw, err := a.pd.AllocMW(MWType1)
	require.NoError(t, err)
	copy(a.buf[610000:], "through the window")
	rkey, err := qa.BindMW(mw, MWBindInfo{WRID: 70, SendFlags: SendSignaled, MR: region, Addr: region.Addr() + 10000, Length: 4096, Access: AccessRemoteRead})
	require.NoError(t, err)
	wc := a.wait(t, 1)[0]
	require.Equal(t, WCSuccess, wc.Status, "bind completion %+v", wc)
	require.Equal(t, WCBindMW, wc.Opcode, "bind completion %+v", wc)
	require.Equal(t, uint64(70), wc.WRID, "bind completion %+v", wc)
	assert.Equal(t, rkey, mw.RKey(), "window rkey %#x (bind returned %#x), bound %v", mw.RKey(), rkey, mw.Bound())
	assert.True(t, mw.Bound(), "window rkey %#x (bind returned %#x), bound %v", mw.RKey(), rkey, mw.Bound())
	require.NoError(t, qb.PostSend([]SendWR{{ID: 71, Opcode: WRRDMARead, Flags: SendSignaled, SGList: b.sge(0, 18),
		RDMA: RDMAInfo{RemoteAddr: region.Addr() + 10000, RKey: rkey}}}))
	if wc := b.wait(t, 1)[0]; wc.Status != WCSuccess || string(b.buf[:18]) != "through the window" {
		assert.Fail(t, fmt.Sprintf("read through the window: %+v %q", wc, b.buf[:18]))
	}
	// Reading beyond the window's 4096 bytes is a remote access error.
	require.NoError(t, qb.PostSend([]SendWR{{ID: 72, Opcode: WRRDMARead, Flags: SendSignaled, SGList: b.sge(0, 16),
		RDMA: RDMAInfo{RemoteAddr: region.Addr() + 10000 + 4090, RKey: rkey}}}))
	wc = b.wait(t, 1)[0]
	assert.Equal(t, WCRemAccessErr, wc.Status, "read beyond the window: %+v", wc)
}

// TestE2EFastRegAndInvalidate registers pages into a fast-register region with a REG_MR work
// request, lets the peer write through the new key, then invalidates it with LOCAL_INV.
func TestE2EFastRegAndInvalidate(t *testing.T) {
	a, b := fabricPair(t)
	qa, qb := rcPair(t, a, b, MTU1024)
	buf, err := AllocBuffer(4*4096, BufferOptions{})
	require.NoError(t, err)
	defer buf.Free()
	fr, err := a.pd.AllocMR(4)
	require.NoError(t, err)
	defer fr.Dereg()
	mem := buf.Bytes()
	pages := [][]byte{mem[8192:12288], mem[0:4096]} // deliberately out of order
	key := IncKey(fr.LKey())
	const iova = 0x7000_0000
	require.NoError(t, qa.PostSend([]SendWR{{ID: 80, Opcode: WRRegMR, Flags: SendSignaled, RegMR: FastReg{
		Key: key, Access: AccessLocalWrite | AccessRemoteWrite, IOVA: iova, Length: 8192, PageSize: 4096, Pages: pages}}}))
	wc := a.wait(t, 1)[0]
	require.Equal(t, WCSuccess, wc.Status, "REG_MR completion %+v", wc)
	require.Equal(t, WCRegMR, wc.Opcode, "REG_MR completion %+v", wc)
	require.True(t, fr.Valid(), "after REG_MR: valid %v key %#x, want %#x", fr.Valid(), fr.LKey(), key)
	require.Equal(t, key, fr.LKey(), "after REG_MR: valid %v key %#x, want %#x", fr.Valid(), fr.LKey(), key)
	// A write straddling the two pages lands in the second half of page 0 of the list and the
	// first half of page 1.
	copy(b.buf, bytes.Repeat([]byte{0xAB}, 4096))
	require.NoError(t, qb.PostSend([]SendWR{{ID: 81, Opcode: WRRDMAWrite, Flags: SendSignaled, SGList: b.sge(0, 4096),
		RDMA: RDMAInfo{RemoteAddr: iova + 2048, RKey: key}}}))
	wc = b.wait(t, 1)[0]
	require.Equal(t, WCSuccess, wc.Status, "write through the fast-registered key: %+v", wc)
	assert.False(t, mem[8192+2047] != 0 || mem[8192+2048] != 0xAB || mem[12287] != 0xAB || mem[2047] != 0xAB || mem[2048] != 0, "the write did not follow the page list")
	require.NoError(t, qa.PostSend([]SendWR{{ID: 82, Opcode: WRLocalInv, Flags: SendSignaled, InvalidateRKey: key}}))
	wc = a.wait(t, 1)[0]
	require.Equal(t, WCSuccess, wc.Status, "LOCAL_INV completion %+v", wc)
	require.Equal(t, WCLocalInv, wc.Opcode, "LOCAL_INV completion %+v", wc)
	assert.False(t, fr.Valid(), "region still valid after LOCAL_INV")
	require.NoError(t, qb.PostSend([]SendWR{{ID: 83, Opcode: WRRDMAWrite, Flags: SendSignaled, SGList: b.sge(0, 8),
		RDMA: RDMAInfo{RemoteAddr: iova, RKey: key}}}))
	wc = b.wait(t, 1)[0]
	assert.Equal(t, WCRemAccessErr, wc.Status, "write after invalidation: %+v", wc)
}

// TestE2EUC connects UC QPs with the masks ibv_uc_pingpong uses and sends and writes.
func TestE2EUC(t *testing.T) {
	a, b := fabricPair(t)
	qa, qb := a.qp(t, QPTypeUC), b.qp(t, QPTypeUC)
	for _, p := range []struct {
		q    *QP
		peer *node
		dqpn uint32
	}{{qa, b, qb.QPN()}, {qb, a, qa.QPN()}} {
		for _, s := range []struct {
			attr QPAttr
			mask QPAttrMask
		}{
			{QPAttr{State: QPStateInit, PortNum: 1, AccessFlags: AccessRemoteWrite}, QPAttrState | QPAttrPKeyIndex | QPAttrPort | QPAttrAccessFlags},
			{QPAttr{State: QPStateRTR, PathMTU: MTU1024, DestQPNum: p.dqpn, RQPSN: 0,
				AHAttr: AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: p.peer.gid, SGIDIndex: 1, HopLimit: 1}}},
				QPAttrState | QPAttrAV | QPAttrPathMTU | QPAttrDestQPN | QPAttrRQPSN},
			{QPAttr{State: QPStateRTS, SQPSN: 0}, QPAttrState | QPAttrSQPSN},
		} {
			require.NoError(t, p.q.Modify(&s.attr, s.mask), "UC -> %v", s.attr.State)
		}
	}
	testSendRecv(t, a, b, qa, qb)
	copy(a.buf, "unreliable write")
	require.NoError(t, qa.PostSend([]SendWR{{ID: 90, Opcode: WRRDMAWrite, Flags: SendSignaled, SGList: a.sge(0, 16),
		RDMA: RDMAInfo{RemoteAddr: b.mr.Addr() + 700000, RKey: b.mr.RKey()}}}))
	a.wait(t, 1)
	// UC has no acknowledgement: the send completes when sent, so wait for the data itself with a
	// second message that consumes a receive behind the write.
	require.NoError(t, qb.PostRecv([]RecvWR{{ID: 91, SGList: b.sge(0, 64)}}))
	require.NoError(t, qa.PostSend([]SendWR{{ID: 92, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 4)}}))
	a.wait(t, 1)
	b.wait(t, 1)
	got := string(b.buf[700000 : 700000+16])
	assert.Equal(t, "unreliable write", got, "UC write delivered %q", got)
}
