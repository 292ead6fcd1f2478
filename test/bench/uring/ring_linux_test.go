//go:build linux

package main

import (
	"bytes"
	"errors"
	"net/netip"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

var loopback = netip.MustParseAddr("127.0.0.1")

func TestABISizes(t *testing.T) {
	assert.EqualValues(t, 64, unsafe.Sizeof(sqe{}))
	assert.EqualValues(t, 16, unsafe.Sizeof(cqe{}))
	assert.EqualValues(t, 120, unsafe.Sizeof(params{}))
	assert.EqualValues(t, 24, unsafe.Sizeof(getEventsArg{}))
	assert.EqualValues(t, 16, unsafe.Sizeof(bufEntry{}))
	assert.EqualValues(t, 40, unsafe.Sizeof(bufReg{}))
	assert.EqualValues(t, 16, unsafe.Sizeof(recvmsgOut{}))
	assert.EqualValues(t, 56, unsafe.Sizeof(msghdr{}))
	assert.EqualValues(t, 64, unsafe.Sizeof(mmsghdr{}))
}

// testRing sets up a ring on the test's (locked) thread, or skips the test where io_uring is
// refused.
func testRing(t *testing.T, mode ringMode) *ring {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	r, err := newRing(64, 256, mode.flags)
	if errors.Is(err, errRefused) {
		t.Skip(err)
	}
	require.NoError(t, err)
	t.Cleanup(r.close)
	return r
}

// skipRefused skips the test where the kernel refuses what the ring needs (a provided-buffer ring
// before 5.19), and fails it on any other error.
func skipRefused(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, errRefused) {
		t.Skip(err)
	}
	require.NoError(t, err)
}

func testPair(t *testing.T) (int, int) {
	t.Helper()
	a, b, err := socketPair(loopback, loopback)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(a); unix.Close(b) })
	return a, b
}

// waitDatagram waits for rx to deliver one datagram, entering the kernel as a blocked reader
// would; the timeout turns a lost completion into a failure instead of a hang.
func waitDatagram(t *testing.T, rx *uringRx) (payload []byte, seg int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		n, err := rx.reap(func(p []byte, s int) { payload, seg = bytes.Clone(p), s })
		require.NoError(t, err)
		if n > 0 {
			require.Equal(t, 1, n)
			return payload, seg
		}
		err = rx.r.waitCQE(int64(time.Second))
		if err != nil && !errors.Is(err, unix.ETIME) {
			require.NoError(t, err)
		}
	}
	t.Fatal("no datagram within 10 s")
	return nil, 0
}

// TestMultishotRoundTrip sends datagrams with IORING_OP_SEND and reads them back through one
// armed multishot receive in each ring mode, byte for byte.
func TestMultishotRoundTrip(t *testing.T) {
	for _, mode := range ringModes {
		t.Run(mode.Name, func(t *testing.T) {
			r := testRing(t, mode)
			a, b := testPair(t)
			ar, err := newArena(1 << 16)
			require.NoError(t, err)
			defer ar.free()
			rx, err := newUringRx(r, mode, b, ar, false, 4, 2048)
			skipRefused(t, err)
			out := ar.bytes(80)
			// More datagrams than buffers: each must be recycled for the next to land.
			for i := range 10 {
				for j := range out {
					out[j] = byte(i*7 + j)
				}
				require.NoError(t, r.queueSend(a, out))
				require.NoError(t, r.flushSends())
				got, seg := waitDatagram(t, rx)
				require.Equal(t, out, got, "datagram %d", i)
				assert.Zero(t, seg)
			}
			assert.Zero(t, rx.rearms)
		})
	}
}

// TestSegmentedRecvmsg sends one UDP_SEGMENT run with IORING_OP_SENDMSG and reads it as one
// GRO buffer through a multishot RECVMSG, which reports the segment size.
func TestSegmentedRecvmsg(t *testing.T) {
	r := testRing(t, ringModes[0])
	a, b := testPair(t)
	require.NoError(t, unix.SetsockoptInt(b, unix.SOL_UDP, unix.UDP_GRO, 1))
	ar, err := newArena(1 << 20)
	require.NoError(t, err)
	defer ar.free()
	rx, err := newUringRx(r, ringModes[0], b, ar, true, 4, 1<<16+256)
	skipRefused(t, err)

	const seg, segs = 1000, 5
	tx := newBatch(ar, 1, seg*segs, true)
	for i := range tx.bufs[0] {
		tx.bufs[0][i] = byte(i / seg)
	}
	tx.iovs[0].len = seg * segs
	hdr := &tx.hdrs[0].hdr
	putSegment(tx.ctls[0], seg)
	hdr.control, hdr.controllen = addrOf(tx.ctls[0]), cmsgSpace
	require.NoError(t, r.queueSendmsg(a, hdr))
	require.NoError(t, r.flushSends())

	got, gotSeg := waitDatagram(t, rx)
	assert.Equal(t, seg, gotSeg)
	assert.Equal(t, tx.bufs[0][:seg*segs], got)
}

// TestMmsgRoundTrip checks the system-call path the rows compare against: a UDP_SEGMENT
// sendmmsg read back by recvmmsg with UDP_GRO, and an empty receive counted as such.
func TestMmsgRoundTrip(t *testing.T) {
	a, b := testPair(t)
	require.NoError(t, unix.SetsockoptInt(b, unix.SOL_UDP, unix.UDP_GRO, 1))
	ar, err := newArena(1 << 20)
	require.NoError(t, err)
	defer ar.free()
	rx := newBatch(ar, 4, 1<<16, true)
	n, err := rx.recv(b)
	require.NoError(t, err)
	require.Zero(t, n)
	assert.EqualValues(t, 1, rx.empty)

	tx := newBatch(ar, 1, 3*100, true)
	for i := range tx.bufs[0] {
		tx.bufs[0][i] = byte(i)
	}
	sent, err := tx.send(a, 1, 300, 100)
	require.NoError(t, err)
	require.Equal(t, 1, sent)
	for n == 0 {
		var err error
		n, err = rx.recv(b)
		require.NoError(t, err)
	}
	require.Equal(t, 1, n)
	m := rx.hdrs[0]
	assert.Equal(t, tx.bufs[0][:300], rx.bufs[0][:m.n])
	assert.Equal(t, 100, groSegment(rx.ctls[0][:m.hdr.controllen]))
}
