package netio

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

var (
	lo1 = netip.MustParseAddr("127.0.0.1")
	lo2 = netip.MustParseAddr("127.0.0.2")
	lo6 = netip.MustParseAddr("::1")
)

// listenPair opens one UDPConn per address set on a common free port. Port 4791 may be owned by
// kernel rxe or another test, so an unprivileged port is found by trial.
func listenPair(t testing.TB, cfg UDPConfig, sets ...[]netip.Addr) []*UDPConn {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 20; attempt++ {
		probe, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(t, err)
		port := uint16(probe.LocalAddr().(*net.UDPAddr).Port)
		probe.Close()
		var conns []*UDPConn
		for _, addrs := range sets {
			c := cfg
			c.Addrs, c.Port = addrs, port
			conn, err := ListenUDP(c)
			if err != nil {
				lastErr = err
				break
			}
			conns = append(conns, conn)
		}
		if len(conns) == len(sets) {
			t.Cleanup(func() {
				for _, c := range conns {
					c.Close()
				}
			})
			return conns
		}
		for _, c := range conns {
			c.Close()
		}
	}
	require.Fail(t, fmt.Sprintf("no free port: %v", lastErr))
	return nil
}

func needIPv6(t testing.TB) {
	c, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	c.Close()
}

func TestUDPBatchSendReceive(t *testing.T) {
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	dst := b.LocalAddrs()[0]
	const total = 1000
	out := makeMsgs(IdealBatchSize, 1040)
	in := makeMsgs(IdealBatchSize, 2048)
	next := 0
	for sent := 0; sent < total; {
		k := min(IdealBatchSize, total-sent)
		for i := 0; i < k; i++ {
			out[i].Buf = seqDatagram(out[i].Buf[:cap(out[i].Buf)], sent+i)[:1040]
			out[i].Dst = dst
			out[i].Src = netip.AddrPortFrom(lo1, uint16(0xC000+(sent+i)%4))
		}
		n, err := a.Send(out[:k])
		require.Equal(t, k, n, "Send = %d, %v", n, err)
		require.NoError(t, err, "Send = %d, %v", n, err)
		sent += k
		for next < sent {
			resetBufs(in)
			n, err := b.Receive(in)
			require.NoError(t, err)
			for _, m := range in[:n] {
				wantSrc := netip.AddrPortFrom(lo1, uint16(0xC000+next%4))
				require.Equal(t, next, seqOf(m.Buf), "datagram %d: seq %d len %d src %v dst %v", next, seqOf(m.Buf), len(m.Buf), m.Src, m.Dst)
				require.Len(t, m.Buf, 1040, "datagram %d: seq %d len %d src %v dst %v", next, seqOf(m.Buf), len(m.Buf), m.Src, m.Dst)
				require.Equal(t, wantSrc, m.Src, "datagram %d: seq %d len %d src %v dst %v", next, seqOf(m.Buf), len(m.Buf), m.Src, m.Dst)
				require.Equal(t, dst, m.Dst, "datagram %d: seq %d len %d src %v dst %v", next, seqOf(m.Buf), len(m.Buf), m.Src, m.Dst)
				next++
			}
		}
	}
	assert.Equal(t, 4, a.SendSockets(), "SendSockets = %d, want 4", a.SendSockets())
	ca, cb := a.Counters(), b.Counters()
	assert.Equal(t, uint64(total), ca.SentDatagrams, "counters a=%+v b=%+v", ca, cb)
	assert.Equal(t, uint64(total*1040), ca.SentBytes, "counters a=%+v b=%+v", ca, cb)
	assert.Equal(t, uint64(total), cb.ReceivedDatagrams, "counters a=%+v b=%+v", ca, cb)
	assert.Equal(t, uint64(total*1040), cb.ReceivedBytes, "counters a=%+v b=%+v", ca, cb)
}

func TestUDPSourcePorts(t *testing.T) {
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	listen := a.LocalAddrs()[0]
	dst := b.LocalAddrs()[0]
	ports := []uint16{0xC001, 0, 0xFFFF, listen.Port(), 0xC001}
	wantPorts := []uint16{0xC001, listen.Port(), 0xFFFF, listen.Port(), 0xC001}
	out := make([]Message, len(ports))
	for i, p := range ports {
		out[i] = Message{Buf: []byte{byte(i)}, Src: netip.AddrPortFrom(lo1, p), Dst: dst}
	}
	n, err := a.Send(out)
	require.Equal(t, len(out), n, fmt.Sprint(n, err))
	require.NoError(t, err, fmt.Sprint(n, err))
	in := makeMsgs(8, 16)
	for got := 0; got < len(out); {
		resetBufs(in)
		n, err := b.Receive(in)
		require.NoError(t, err)
		for _, m := range in[:n] {
			i := int(m.Buf[0])
			assert.Equal(t, netip.AddrPortFrom(lo1, wantPorts[i]), m.Src, "datagram %d from %v, want port %#x", i, m.Src, wantPorts[i])
		}
		got += n
	}
	assert.Equal(t, 2, a.SendSockets(), "SendSockets = %d, want 2 (0xC001 and 0xFFFF)", a.SendSockets())
}

func TestUDPSocketOptions(t *testing.T) {
	needIPv6(t)
	conns := listenPair(t, UDPConfig{ZeroChecksum: true}, []netip.Addr{lo1, lo6})
	c := conns[0]
	// Open a source-port socket on each family.
	for _, src := range []netip.AddrPort{netip.AddrPortFrom(lo1, 0xC123), netip.AddrPortFrom(lo6, 0xC123)} {
		_, err := c.Send([]Message{{Buf: []byte{1}, Src: src, Dst: c.LocalAddrs()[0]}})
		require.False(t, err != nil && !errors.Is(err, ErrAddressFamily), err)
		if src.Addr().Is6() {
			_, err := c.Send([]Message{{Buf: []byte{1}, Src: src, Dst: c.LocalAddrs()[1]}})
			require.NoError(t, err)
		}
	}
	rmemMax := readSysctl(t, "/proc/sys/net/core/rmem_max")
	check := func(name string, s *udpSocket, level, opt, want int) {
		t.Helper()
		got, err := getsockoptInt(s.rc, level, opt)
		if err != nil || got != want {
			assert.Fail(t, fmt.Sprintf("%v %s = %d, %v; want %d", s.local, name, got, err, want))
		}
	}
	socks := append([]*udpSocket(nil), c.listeners...)
	for _, s := range *c.senders.Load() {
		socks = append(socks, s)
	}
	require.Len(t, socks, 4, "%d sockets, want 2 listeners and 2 senders", len(socks))
	for _, s := range socks {
		if s.local.Addr().Is4() {
			check("IP_MTU_DISCOVER", s, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO)
			check("SO_NO_CHECK", s, unix.SOL_SOCKET, unix.SO_NO_CHECK, 1)
		} else {
			check("IPV6_MTU_DISCOVER", s, unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_DO)
			check("UDP_NO_CHECK6_RX", s, unix.IPPROTO_UDP, unix.UDP_NO_CHECK6_RX, 1)
			check("UDP_NO_CHECK6_TX", s, unix.IPPROTO_UDP, unix.UDP_NO_CHECK6_TX, 1)
		}
	}
	for _, s := range c.listeners {
		got, err := getsockoptInt(s.rc, unix.SOL_SOCKET, unix.SO_RCVBUF)
		// Linux reports twice the granted size; the grant is capped by rmem_max without CAP_NET_ADMIN.
		if want := 2 * min(rmemMax, DefaultSocketBuffer); err != nil || got < want {
			assert.Fail(t, fmt.Sprintf("%v SO_RCVBUF = %d, %v; want >= %d", s.local, got, err, want))
		}
	}
}

func readSysctl(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("cannot read %s: %v", path, err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return v
}

func TestUDPIPv6ZeroChecksum(t *testing.T) {
	needIPv6(t)
	// The sender sends UDP checksum 0 as kernel rxe does; the receiver must still get it.
	conns := listenPair(t, UDPConfig{ZeroChecksum: true}, []netip.Addr{lo6})
	c := conns[0]
	dst := c.LocalAddrs()[0]
	if _, err := c.Send([]Message{{Buf: []byte("v6"), Src: netip.AddrPortFrom(lo6, 0xC0DE), Dst: dst, TOS: 0x10, TTL: 3}}); err != nil {
		require.Fail(t, fmt.Sprint(err))
	}
	in := makeMsgs(1, 16)
	n, err := c.Receive(in)
	if n != 1 || err != nil || string(in[0].Buf) != "v6" || in[0].Src != netip.AddrPortFrom(lo6, 0xC0DE) || in[0].Dst != dst {
		require.Fail(t, fmt.Sprintf("Receive = %d, %v, %+v", n, err, in[0]))
	}
}

// TestUDPTrafficClassAndTTL checks the per-datagram control messages with a plain socket that
// asks the kernel to report TOS and TTL.
func TestUDPTrafficClassAndTTL(t *testing.T) {
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1})
	c := conns[0]
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	require.NoError(t, err)
	defer rx.Close()
	rc, _ := rx.SyscallConn()
	rc.Control(func(fd uintptr) {
		unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1)
		unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTTL, 1)
	})
	dst := rx.LocalAddr().(*net.UDPAddr).AddrPort()
	for _, tt := range []struct{ tos, ttl, wantTOS, wantTTL uint8 }{
		{0x68, 7, 0x68, 7},
		{0, 0, 0, DefaultTTL},
		{0xB8, 0, 0xB8, DefaultTTL},
		{0, 255, 0, 255},
	} {
		if _, err := c.Send([]Message{{Buf: []byte{1}, Dst: dst, TOS: tt.tos, TTL: tt.ttl}}); err != nil {
			require.Fail(t, fmt.Sprint(err))
		}
		buf, oob := make([]byte, 16), make([]byte, 128)
		_, oobn, _, _, err := rx.ReadMsgUDP(buf, oob)
		require.NoError(t, err)
		cms, err := unix.ParseSocketControlMessage(oob[:oobn])
		require.NoError(t, err)
		var tos, ttl int = -1, -1
		for _, cm := range cms {
			switch cm.Header.Type {
			case unix.IP_TOS:
				tos = int(cm.Data[0])
			case unix.IP_TTL:
				ttl = int(cm.Data[0])
			}
		}
		assert.Equal(t, int(tt.wantTOS), tos, "sent TOS %#x TTL %d: received TOS %#x TTL %d, want %#x %d", tt.tos, tt.ttl, tos, ttl, tt.wantTOS, tt.wantTTL)
		assert.Equal(t, int(tt.wantTTL), ttl, "sent TOS %#x TTL %d: received TOS %#x TTL %d, want %#x %d", tt.tos, tt.ttl, tos, ttl, tt.wantTOS, tt.wantTTL)
	}
}

func TestUDPMultiAddressReceive(t *testing.T) {
	needIPv6(t)
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1, lo6}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	const perFamily = 300
	got := make(chan map[netip.AddrPort]int, 1)
	go func() {
		// Blocks in the poller before anything is sent.
		seen := map[netip.AddrPort]int{}
		in := makeMsgs(16, 64)
		for total := 0; total < 2*perFamily; {
			resetBufs(in)
			n, err := a.Receive(in)
			if !assert.NoError(t, err) {
				break
			}
			for _, m := range in[:n] {
				seen[m.Dst]++
			}
			total += n
		}
		got <- seen
	}()
	for i := 0; i < perFamily; i += 10 {
		out := makeMsgs(10, 32)
		for k := range out {
			out[k].Dst = a.LocalAddrs()[0]
		}
		_, err := b.Send(out)
		require.NoError(t, err)
		for k := range out {
			out[k].Dst = a.LocalAddrs()[1] // a to itself over IPv6
		}
		_, err = a.Send(out)
		require.NoError(t, err)
	}
	seen := <-got
	require.Equal(t, perFamily, seen[a.LocalAddrs()[0]], "received per local address: %v", seen)
	require.Equal(t, perFamily, seen[a.LocalAddrs()[1]], "received per local address: %v", seen)
}

func TestUDPErrors(t *testing.T) {
	for _, tt := range []struct {
		addrs []netip.Addr
		want  error
	}{
		{nil, ErrNoAddresses},
		{[]netip.Addr{netip.IPv4Unspecified()}, ErrWildcardAddress},
		{[]netip.Addr{lo1, lo1}, ErrDuplicateAddress},
	} {
		if c, err := ListenUDP(UDPConfig{Addrs: tt.addrs, Port: 1}); !errors.Is(err, tt.want) {
			if c != nil {
				c.Close()
			}
			assert.Fail(t, fmt.Sprintf("ListenUDP(%v) = %v, want %v", tt.addrs, err, tt.want))
		}
	}
	conns := listenPair(t, UDPConfig{MaxSendSockets: 1}, []netip.Addr{lo1})
	c := conns[0]
	dst := c.LocalAddrs()[0]
	msgs := []Message{
		{Buf: []byte{1}, Dst: dst, Src: netip.AddrPortFrom(lo1, 0xC001)},
		{Buf: []byte{2}, Dst: dst, Src: netip.AddrPortFrom(lo1, 0xC002)},
	}
	n, err := c.Send(msgs)
	require.Equal(t, 1, n, "Send = %d, %v; want 1, ErrTooManySendSockets", n, err)
	require.ErrorIs(t, err, ErrTooManySendSockets, "Send = %d, %v; want 1, ErrTooManySendSockets", n, err)
	for _, tt := range []struct {
		m    Message
		want error
	}{
		{Message{Dst: netip.MustParseAddrPort("127.0.0.2:9"), Src: netip.MustParseAddrPort("127.0.0.3:0")}, ErrUnknownSource},
		{Message{Buf: make([]byte, 65508), Dst: dst}, ErrMessageTooLong},
		{Message{Dst: netip.MustParseAddrPort("[::1]:9")}, ErrNoSourceAddress},
		{Message{Dst: dst, SegmentSize: 100}, ErrSegmentSize},
	} {
		n, err := c.Send([]Message{{Buf: []byte{3}, Dst: dst}, tt.m})
		assert.Equal(t, 1, n, "Send(%+v) = %d, %v; want 1, %v", tt.m.Dst, n, err, tt.want)
		assert.ErrorIs(t, err, tt.want, "Send(%+v) = %d, %v; want 1, %v", tt.m.Dst, n, err, tt.want)
	}
	// The datagrams sent before each error arrived: 1 + 4.
	in := makeMsgs(8, 8)
	for got := 0; got < 5; {
		resetBufs(in)
		n, err := c.Receive(in)
		require.NoError(t, err)
		got += n
	}
}

func TestUDPTruncation(t *testing.T) {
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1})
	c := conns[0]
	dst := c.LocalAddrs()[0]
	out := []Message{{Buf: make([]byte, 100), Dst: dst}, {Buf: []byte("fits"), Dst: dst}}
	if _, err := c.Send(out); err != nil {
		require.Fail(t, fmt.Sprint(err))
	}
	in := makeMsgs(2, 50)
	n, err := c.Receive(in)
	if n != 1 || err != nil || string(in[0].Buf) != "fits" || cap(in[0].Buf) != 50 {
		require.Fail(t, fmt.Sprintf("Receive = %d, %v, %q", n, err, in[0].Buf))
	}
	got := c.Counters().Drops[DropTruncated]
	require.Equal(t, uint64(1), got, "truncated drops = %d", got)
}

func TestUDPCloseUnblocksReceive(t *testing.T) {
	needIPv6(t)
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1}, []netip.Addr{lo2, lo6})
	for _, c := range conns {
		errc := make(chan error, 2)
		for i := 0; i < 2; i++ {
			go func() {
				_, err := c.Receive(makeMsgs(4, 64))
				errc <- err
			}()
		}
		require.NoError(t, c.Close())
		for i := 0; i < 2; i++ {
			err := <-errc
			require.ErrorIs(t, err, net.ErrClosed, "%v: Receive after Close = %v", c.LocalAddrs(), err)
		}
		_, err := c.Send([]Message{{Buf: []byte{1}, Dst: c.LocalAddrs()[0]}})
		require.ErrorIs(t, err, net.ErrClosed, "Send after Close = %v", err)
		err = c.Close()
		require.ErrorIs(t, err, net.ErrClosed, "second Close = %v", err)
	}
}

func TestUDPSendReceiveAllocs(t *testing.T) {
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	out := makeMsgs(16, 1040)
	for i := range out {
		out[i].Dst = b.LocalAddrs()[0]
		out[i].Src = netip.AddrPortFrom(lo1, 0xC000+uint16(i%2))
		out[i].TOS, out[i].TTL = 0x20, 9
	}
	in := makeMsgs(16, 2048)
	round := func() {
		if _, err := a.Send(out); err != nil {
			t.Fatal(err)
		}
		for got := 0; got < len(out); {
			resetBufs(in)
			n, err := b.Receive(in)
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
	}
	round()
	allocs := testing.AllocsPerRun(50, round)
	require.Equal(t, float64(0), allocs, "%v allocations per round of 16 datagrams, want 0", allocs)
	require.Equal(t, out[0].Buf, in[0].Buf, "payload mismatch")
}

func TestFaultConnOverUDP(t *testing.T) {
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	fc, err := WithFaults(a, FaultConfig{Loss: 0.5, Dup: 0.1, Seed: 1}, nil)
	require.NoError(t, err)
	sendSeq(t, fc, b.LocalAddrs()[0], 0, 200)
	c := fc.FaultCounters()
	want := int(200 - c.Dropped + c.Duplicated)
	in := makeMsgs(16, 64)
	for got := 0; got < want; {
		resetBufs(in)
		n, err := b.Receive(in)
		require.NoError(t, err)
		got += n
	}
	require.Equal(t, uint64(want), a.Counters().SentDatagrams, "inner sent %d, want %d; faults %+v", a.Counters().SentDatagrams, want, c)
	require.NotEqual(t, uint64(0), c.Dropped, "inner sent %d, want %d; faults %+v", a.Counters().SentDatagrams, want, c)
	require.NotEqual(t, uint64(0), c.Duplicated, "inner sent %d, want %d; faults %+v", a.Counters().SentDatagrams, want, c)
	require.NoError(t, fc.Close())
}

// Two processes (here: two conns) on one address pick the same per-QP source ports; both must be
// able to send from them.
func TestUDPSourcePortSharedBetweenConns(t *testing.T) {
	first := listenPair(t, UDPConfig{}, []netip.Addr{lo1}, []netip.Addr{lo2})
	second := listenPair(t, UDPConfig{}, []netip.Addr{lo1})
	a, b, c := first[0], first[1], second[0]
	src := netip.AddrPortFrom(lo1, 0xC0DE)
	dst := b.LocalAddrs()[0]
	for i, conn := range []*UDPConn{a, c} {
		n, err := conn.Send([]Message{{Buf: []byte{byte(i)}, Src: src, Dst: dst}})
		require.Equal(t, 1, n, "conn %d: send from %v: %d, %v", i, src, n, err)
		require.NoError(t, err, "conn %d: send from %v: %d, %v", i, src, n, err)
	}
	in := makeMsgs(4, 16)
	for got := 0; got < 2; {
		resetBufs(in)
		n, err := b.Receive(in)
		require.NoError(t, err)
		for _, m := range in[:n] {
			assert.Equal(t, src, m.Src, "datagram from %v, want %v", m.Src, src)
		}
		got += n
	}
}

// Datagrams the kernel drops because nobody reads show as DropQueueFull, before and after Close.
func TestUDPKernelDropsCounted(t *testing.T) {
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1})
	small := listenPair(t, UDPConfig{SocketBuffer: 4096}, []netip.Addr{lo2})
	a, b := conns[0], small[0]
	out := makeMsgs(IdealBatchSize, 1040)
	for i := range out {
		out[i].Dst = b.LocalAddrs()[0]
	}
	const rounds = 8
	for range rounds {
		_, err := a.Send(out)
		require.NoError(t, err)
	}
	// The kernel may still be delivering (or dropping) when Send returns, so read without
	// blocking until every datagram is accounted for.
	in := makeMsgs(IdealBatchSize, 2048)
	got := 0
	var drops uint64
	for {
		drops = b.Counters().Drops[DropQueueFull]
		if uint64(got)+drops >= rounds*IdealBatchSize {
			break
		}
		resetBufs(in)
		n, err := b.receiveFrom(b.listeners[0], in, false)
		require.NoError(t, err)
		got += n
		if n == 0 {
			runtime.Gosched()
		}
	}
	assert.NotZero(t, drops, "a 4 KiB buffer cannot hold 512 datagrams")
	assert.Equal(t, uint64(rounds*IdealBatchSize), uint64(got)+drops, "every datagram read or counted once")
	require.NoError(t, b.Close())
	assert.Equal(t, drops, b.Counters().Drops[DropQueueFull])
}

// Every sendmmsg and recvmmsg is counted, and a receive that finds nothing is counted as empty.
func TestUDPSystemCallsCounted(t *testing.T) {
	for _, gro := range []bool{true, false} {
		t.Run(map[bool]string{true: "gro", false: "nogro"}[gro], func(t *testing.T) {
			conns := listenPair(t, UDPConfig{DisableGRO: !gro, SetIPv4ID: func(*Message, uint16, uint16) {}},
				[]netip.Addr{lo1}, []netip.Addr{lo2})
			a, b := conns[0], conns[1]
			in := makeMsgs(4, 2048)
			n, err := b.TryReceive(in)
			require.NoError(t, err)
			require.Zero(t, n)
			cb := b.Counters()
			assert.Equal(t, uint64(1), cb.ReceiveCalls)
			assert.Equal(t, uint64(1), cb.EmptyReceives)
			assert.Zero(t, cb.SendCalls)

			out := make([]Message, 3)
			for i := range out {
				out[i] = Message{Buf: seqDatagram(make([]byte, 64), i), Dst: b.LocalAddrs()[0]}
			}
			_, err = a.Send(out)
			require.NoError(t, err)
			ca := a.Counters()
			assert.Equal(t, uint64(1), ca.SendCalls, "one batch, one sendmmsg")
			assert.Zero(t, ca.ReceiveCalls)

			// A waiting Receive may find the socket empty first; it returns after the one read
			// that found data.
			resetBufs(in)
			n, err = b.Receive(in)
			require.NoError(t, err)
			require.NotZero(t, n)
			cb = b.Counters()
			assert.Equal(t, uint64(1), cb.ReceiveCalls-cb.EmptyReceives, "reads that found data")
			assert.Zero(t, cb.SendCalls)
		})
	}
}
