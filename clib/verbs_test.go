package main

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildProgram compiles testdata/name.c against the distribution's headers and links it with the
// library, under both its names, as a program is linked with libibverbs and librdmacm.
func buildProgram(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	out, err := exec.Command("cc", "-Wall", "-Werror", "-o", bin, "testdata/"+name+".c",
		filepath.Join(libDir, "libibverbs.so.1"), filepath.Join(libDir, "librdmacm.so.1")).CombinedOutput()
	require.NoError(t, err, "cc: %s", out)
	return bin
}

// runProgram builds testdata/name.c, runs it on the device of a fresh loopback address with the
// arguments args gives for that address (none when nil), and requires it to print "ok" and exit 0.
func runProgram(t *testing.T, name string, args func(addr string) []string) {
	t.Helper()
	needLibrary(t)
	bin := buildProgram(t, name)
	addr, _ := addressPair()
	var argv []string
	if args != nil {
		argv = args(addr)
	}
	require.Equal(t, "ok\n", start(t, addr, bin, argv...).wait(t))
}

// TestVerbsProgram runs testdata/verbs.c: libibverbs' errno conventions (EINVAL, EBUSY,
// EOPNOTSUPP, bad_wr), two contexts of one process sharing the device, RC traffic between two
// QPs of one device (SEND with immediate, RDMA WRITE and READ, inline data), a completion channel
// whose fd is non-blocking and polled with poll(2), UD traffic answered through
// ibv_create_ah_from_wc and read through an extended CQ, an extended QP posting through the
// ibv_wr_* calls, an SRQ's attributes and limit, ibv_resize_cq, the port event on async_fd, and a
// child of fork() refused at once.
func TestVerbsProgram(t *testing.T) {
	runProgram(t, "verbs", nil)
}

// TestCompWaitProgram runs testdata/compwait.c: a thread blocked in ibv_get_cq_event on a blocking
// channel gets the event of a message that arrives while it waits, pthread_cancel ends such a wait,
// and 9000 events fired without being read (more than the channel's pipe holds) are all read back.
func TestCompWaitProgram(t *testing.T) {
	runProgram(t, "compwait", nil)
}

// TestMWProgram runs testdata/mw.c: memory windows of both types between two RC QPs. A type 1
// window bound with ibv_bind_mw (its rkey advanced at once) and unbound with a zero-length bind,
// type 2 windows bound by a BIND_MW work request and by ibv_wr_bind_mw and invalidated by
// LOCAL_INV and by the peer's SEND_WITH_INV; RDMA WRITEs through a window land, those past its end
// or after an unbind, invalidation or dealloc complete with IBV_WC_REM_ACCESS_ERR; EINVAL for a
// window type that does not exist, for binding a type 2 or zero-based type 1 window with
// ibv_bind_mw, and for a BIND_MW without a window.
func TestMWProgram(t *testing.T) {
	runProgram(t, "mw", nil)
}

// TestAddressTaken runs the program on an address whose RoCE port something else holds: its
// first verb that needs the port fails, with one line on stderr saying to set GORXE_ADDR.
func TestAddressTaken(t *testing.T) {
	needLibrary(t)
	bin := buildProgram(t, "verbs")
	addr, _ := addressPair()
	held, err := net.ListenPacket("udp4", net.JoinHostPort(addr, "4791"))
	require.NoError(t, err)
	defer held.Close()
	p := start(t, addr, bin)
	<-p.done
	require.Error(t, p.runErr)
	lines := strings.Split(strings.TrimSpace(p.err.String()), "\n")
	require.NotEmpty(t, lines)
	assert.Contains(t, lines[0], "gorxe_"+addr+": ")
	assert.Contains(t, lines[0], "address already in use")
	assert.Contains(t, lines[0], "give each program its own address with GORXE_ADDR")
	assert.Contains(t, p.err.String(), "check failed: pd (errno 98: Address already in use)")
}

// TestSharedPDProgram runs testdata/pd.c: a context imported from a dup of another's cmd_fd,
// a PD and an MR imported by handle and used for traffic, EINVAL for an fd or handle that names
// nothing, EOPNOTSUPP for another process's context, the imported objects left to their owner
// when unimported; and a parent domain standing for its PD, which stays busy meanwhile.
func TestSharedPDProgram(t *testing.T) {
	runProgram(t, "pd", nil)
}

// TestSRQProgram runs testdata/srq.c: an SRQ's posts (ENOMEM past its depth, EINVAL for too many
// SGEs, posts beyond the depth it was created with after ibv_modify_srq grew it), SENDs landing
// in its receives in the order they were posted while its post ring wraps, and the limit event.
func TestSRQProgram(t *testing.T) {
	runProgram(t, "srq", nil)
}

// TestMcastProgram runs testdata/mcast.c: a UD QP attached to an IPv4 group with
// ibv_attach_mcast receives a UD SEND to the group and, detached, no longer does; EINVAL for an
// RC QP, a unicast GID and a QP that is not attached.
func TestMcastProgram(t *testing.T) {
	group := fmt.Sprintf("%d.1", 100+groups.Add(1)%150)
	runProgram(t, "mcast", func(string) []string { return []string{group} })
}

// TestSignalsProgram runs testdata/signals.c: a SIGALRM handler installed without SA_ONSTACK,
// firing every 50 µs during traffic, runs only on the program's own thread, since the library's
// threads block the signal (perftest's timed runs died now and then when it ran on one of them),
// and there on the thread's own stack or its alternate one, never a goroutine's: the library gives
// the handler SA_ONSTACK, and a second one installed halfway, without losing either.
func TestSignalsProgram(t *testing.T) {
	runProgram(t, "signals", nil)
}
