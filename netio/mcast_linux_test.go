package netio

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// joinOrSkip joins c to group, skipping the test only when the kernel refuses the membership
// (a kernel or namespace without multicast on loopback); any other failure fails the test.
func joinOrSkip(t *testing.T, c *UDPConn, group netip.Addr) {
	t.Helper()
	err := c.JoinGroup(group)
	var sysErr *os.SyscallError
	if errors.As(err, &sysErr) {
		t.Skipf("the kernel refuses to join %v on loopback: %v", group, err)
	}
	require.NoError(t, err)
}

// groupFor returns a group address unique to the test's port, so parallel test binaries do not
// see each other's datagrams.
func groupFor(c *UDPConn, v6 bool) netip.Addr {
	p := c.LocalAddrs()[0].Port()
	if v6 {
		return netip.AddrFrom16([16]byte{0: 0xff, 1: 0x0e, 14: byte(p >> 8), 15: byte(p)})
	}
	return netip.AddrFrom4([4]byte{239, 77, byte(p >> 8), byte(p)})
}

// receiveOne waits for one datagram on c.
func receiveOne(t *testing.T, c *UDPConn) Message {
	t.Helper()
	msgs := makeMsgs(1, 2048)
	n, err := c.Receive(msgs)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	return msgs[0]
}

func TestUDPMulticastJoinReceiveLeave(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b netip.Addr
		v6   bool
	}{
		{"IPv4", lo1, lo2, false},
		// One IPv6 loopback address: the device sends to a group it belongs to itself.
		{"IPv6", netip.IPv6Loopback(), netip.Addr{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.v6 {
				needIPv6(t)
			}
			sets := [][]netip.Addr{{tt.a}}
			if tt.b.IsValid() {
				sets = append(sets, []netip.Addr{tt.b})
			}
			conns := listenPair(t, UDPConfig{}, sets...)
			a, b := conns[0], conns[len(conns)-1]
			group := groupFor(a, tt.v6)
			dst := netip.AddrPortFrom(group, a.LocalAddrs()[0].Port())

			// A Receive already waiting on b's only listener must be woken by the join and
			// see the group's datagrams afterwards.
			got := make(chan Message, 1)
			go func() {
				defer close(got)
				msgs := makeMsgs(1, 2048)
				n, err := b.Receive(msgs)
				if errors.Is(err, net.ErrClosed) {
					return
				}
				if assert.NoError(t, err) && assert.Equal(t, 1, n) {
					got <- msgs[0]
				}
			}()
			joinOrSkip(t, b, group)
			require.NoError(t, b.JoinGroup(group), "a second join only counts")
			_, err := a.Send([]Message{{Buf: []byte("to the group"), Dst: dst}})
			if errors.Is(err, syscall.ENETUNREACH) {
				// Linux routes IPv6 multicast only through interfaces flagged MULTICAST,
				// which lo is not unless configured so.
				require.NoError(t, b.Close())
				<-got
				t.Skipf("the kernel has no route for %v on loopback: %v", group, err)
			}
			require.NoError(t, err)
			m, ok := <-got
			require.True(t, ok)
			assert.Equal(t, "to the group", string(m.Buf))
			assert.Equal(t, dst, m.Dst, "a group datagram arrives with the group as its destination")
			assert.Equal(t, a.LocalAddrs()[0], m.Src)
			assert.Equal(t, []netip.Addr{group}, b.Groups())

			// Two joins need two leaves; after the last, group datagrams no longer arrive: the
			// next datagram b receives is the unicast one sent after them.
			require.NoError(t, b.LeaveGroup(group))
			assert.Equal(t, []netip.Addr{group}, b.Groups())
			require.NoError(t, b.LeaveGroup(group))
			assert.Empty(t, b.Groups())
			assert.ErrorIs(t, b.LeaveGroup(group), ErrNotJoined)
			_, err = a.Send([]Message{{Buf: []byte("nobody listens"), Dst: dst}, {Buf: []byte("unicast"), Dst: b.LocalAddrs()[0]}})
			require.NoError(t, err)
			assert.Equal(t, "unicast", string(receiveOne(t, b).Buf))

			c := b.Counters()
			assert.Equal(t, uint64(1), c.GroupJoins)
			assert.Equal(t, uint64(1), c.GroupLeaves)
		})
	}
}

// A member of a group on the sending host receives its own datagrams, as kernel rxe's sockets
// do (multicast loopback is on), and so does every other member.
func TestUDPMulticastLoopback(t *testing.T) {
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	group := groupFor(a, false)
	joinOrSkip(t, a, group)
	joinOrSkip(t, b, group)
	dst := netip.AddrPortFrom(group, a.LocalAddrs()[0].Port())
	_, err := a.Send([]Message{{Buf: []byte("echo"), Dst: dst, TTL: 1}})
	require.NoError(t, err)
	for _, c := range []*UDPConn{a, b} {
		m := receiveOne(t, c)
		assert.Equal(t, "echo", string(m.Buf))
		assert.Equal(t, dst, m.Dst)
	}
}

func TestUDPMulticastMisuse(t *testing.T) {
	c := listenPair(t, UDPConfig{}, []netip.Addr{lo1})[0]
	assert.ErrorIs(t, c.JoinGroup(lo2), ErrNotMulticast)
	assert.ErrorIs(t, c.LeaveGroup(lo2), ErrNotMulticast)
	assert.ErrorIs(t, c.LeaveGroup(netip.MustParseAddr("239.1.1.1")), ErrNotJoined)
	assert.ErrorIs(t, c.JoinGroup(netip.MustParseAddr("ff0e::1")), ErrNoSourceAddress, "no IPv6 address to join on")
	require.NoError(t, c.Close())
	assert.ErrorIs(t, c.JoinGroup(netip.MustParseAddr("239.1.1.1")), net.ErrClosed)
}

// Leaving while another goroutine reads must not end the reads: a closed group socket is passed
// over, not reported as the Conn's closure.
func TestUDPMulticastLeaveWhileReading(t *testing.T) {
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1}, []netip.Addr{lo2})
	a, b := conns[0], conns[1]
	group := groupFor(a, false)
	done := make(chan error, 1)
	go func() {
		msgs := makeMsgs(4, 2048)
		for {
			n, err := b.Receive(msgs)
			if err != nil {
				done <- err
				return
			}
			for _, m := range msgs[:n] {
				if string(m.Buf) == "last" {
					done <- nil
					return
				}
			}
			resetBufs(msgs)
		}
	}()
	for range 50 {
		joinOrSkip(t, b, group)
		require.NoError(t, b.LeaveGroup(group))
	}
	_, err := a.Send([]Message{{Buf: []byte("last"), Dst: b.LocalAddrs()[0]}})
	require.NoError(t, err)
	require.NoError(t, <-done)
}

// A Conn with several listeners already polls them; a join adds the group's socket to the set,
// and two addresses on one interface make one membership.
func TestUDPMulticastSeveralListeners(t *testing.T) {
	conns := listenPair(t, UDPConfig{}, []netip.Addr{lo1}, []netip.Addr{lo2, netip.MustParseAddr("127.0.0.3")})
	a, b := conns[0], conns[1]
	group := groupFor(a, false)
	joinOrSkip(t, b, group)
	dst := netip.AddrPortFrom(group, a.LocalAddrs()[0].Port())
	_, err := a.Send([]Message{{Buf: []byte("to both addresses' group"), Dst: dst}})
	require.NoError(t, err)
	m := receiveOne(t, b)
	assert.Equal(t, "to both addresses' group", string(m.Buf))
	assert.Equal(t, dst, m.Dst)
	require.NoError(t, b.LeaveGroup(group))
}
