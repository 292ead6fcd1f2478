package soak

import (
	"bytes"
	"context"
	"encoding/binary"
	"net"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/counter"
)

// Client memory per QP: the WRITE source, the READ destination, the SEND buffer, two atomic results.
const clientSlot = 2*writeSize + sendSize + 16

type sample struct {
	at         time.Duration
	goroutines int
	heap, rss  uint64
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, name)
	return n
}

func freePort(t *testing.T) uint16 {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	require.NoError(t, err)
	defer c.Close()
	return uint16(c.LocalAddr().(*net.UDPAddr).Port)
}

// TestSoakUDP: see the package documentation.
func TestSoakUDP(t *testing.T) {
	if os.Getenv("GORXE_SOAK_UDP") == "" {
		t.Skip("set GORXE_SOAK_UDP=1 (make soak-udp)")
	}
	minutes := envInt(t, "SOAK_MINUTES", 0)
	target := uint64(envInt(t, "SOAK_BYTES", 1<<30))
	nqp := 8
	if minutes > 0 {
		nqp = 64
	}
	timeout := uint8(14)
	if os.Getenv("SOAK_HOG") != "" {
		timeout = 12 // 8 x 16.8 ms of unanswered timeouts used to be fatal
		startChild(t, "hog")
	}
	t.Logf("faults %q, %d QPs, timeout %d, %s", os.Getenv("GORXE_FAULTS"), nqp, timeout,
		map[bool]string{true: strconv.Itoa(minutes) + " min", false: strconv.FormatUint(target>>20, 10) + " MiB"}[minutes > 0])

	port := freePort(t)
	c, err := openSide(clientAddr, port, nqp, nqp*clientSlot)
	require.NoError(t, err)
	defer c.dev.Close()
	srv := startChild(t, "server")
	require.NoError(t, send(srv.in, hello{Port: port, QPNs: c.qpns(), Timeout: timeout}))
	var sh hello
	require.NoError(t, recv(srv.out, &sh))
	require.Empty(t, sh.Err, "server")
	require.NoError(t, c.connect(sh.QPNs, serverAddr, timeout))

	start := time.Now()
	var moved, posted, completed, sends uint64
	var samples []sample
	nextSample := time.Duration(0)
	words := make([]uint64, nqp) // the server's atomic word per QP, as this side expects it
	wcs := make([]gorxe.WC, 256)
	for round := uint64(0); ; round++ {
		el := time.Since(start)
		if minutes > 0 {
			if el >= nextSample {
				samples = append(samples, sample{el.Round(time.Second), runtime.NumGoroutine(), liveHeap(), rss()})
				nextSample += 10 * time.Second
			}
			if el >= time.Duration(minutes)*time.Minute {
				break
			}
		} else if moved >= target {
			break
		}
		for i, q := range c.qps {
			base := i * clientSlot
			src, dst := base, base+writeSize
			sbuf, res := base+2*writeSize, base+2*writeSize+sendSize
			seq := round*uint64(nqp) + uint64(i)
			fill(c.buf[src:src+writeSize], seq)
			clear(c.buf[dst : dst+writeSize])
			binary.LittleEndian.PutUint64(c.buf[sbuf:], seq)
			fill(c.buf[sbuf+8:sbuf+sendSize], seq)
			remote := sh.Addr + uint64(i*slotSize)
			word := remote + writeSize
			id := uint64(i) << 8
			wrs := []gorxe.SendWR{
				{ID: id | 1, Opcode: gorxe.WRRDMAWrite, Flags: gorxe.SendSignaled, SGList: c.sge(src, writeSize),
					RDMA: gorxe.RDMAInfo{RemoteAddr: remote, RKey: sh.RKey}},
				{ID: id | 2, Opcode: gorxe.WRRDMARead, Flags: gorxe.SendSignaled, SGList: c.sge(dst, writeSize),
					RDMA: gorxe.RDMAInfo{RemoteAddr: remote, RKey: sh.RKey}},
				{ID: id | 3, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled, SGList: c.sge(sbuf, sendSize)},
				{ID: id | 4, Opcode: gorxe.WRAtomicFetchAndAdd, Flags: gorxe.SendSignaled, SGList: c.sge(res, 8),
					Atomic: gorxe.AtomicInfo{RemoteAddr: word, RKey: sh.RKey, CompareAdd: 1}},
				{ID: id | 5, Opcode: gorxe.WRAtomicCmpAndSwp, Flags: gorxe.SendSignaled, SGList: c.sge(res+8, 8),
					Atomic: gorxe.AtomicInfo{RemoteAddr: word, RKey: sh.RKey, CompareAdd: words[i] + 1, Swap: words[i] + 2}},
			}
			require.NoError(t, q.PostSend(wrs))
			posted += uint64(len(wrs))
		}
		for got := 0; got < 5*nqp; {
			k, err := c.poll(context.Background(), wcs, 2*time.Minute)
			require.NoError(t, err, "round %d: %d of %d completions after %v; counters %+v", round, got, 5*nqp, time.Since(start), c.dev.Counters())
			for _, wc := range wcs[:k] {
				require.Equal(t, gorxe.WCSuccess, wc.Status, "round %d WR %#x; counters %+v", round, wc.WRID, c.dev.Counters())
			}
			got += k
			completed += uint64(k)
		}
		for i := range c.qps {
			base := i * clientSlot
			res := base + 2*writeSize + sendSize
			require.True(t, bytes.Equal(c.buf[base:base+writeSize], c.buf[base+writeSize:base+2*writeSize]),
				"round %d QP %d: READ returned other bytes than the WRITE placed", round, i)
			require.Equal(t, words[i], binary.LittleEndian.Uint64(c.buf[res:]), "round %d QP %d fetch-add", round, i)
			require.Equal(t, words[i]+1, binary.LittleEndian.Uint64(c.buf[res+8:]), "round %d QP %d compare-swap", round, i)
			words[i] += 2
		}
		sends += uint64(nqp)
		moved += uint64(nqp) * (2*writeSize + sendSize + 16)
	}
	el := time.Since(start)
	srv.in.Close()
	var res result
	require.NoError(t, recv(srv.out, &res))
	require.Empty(t, res.Err, "server")
	assert.Equal(t, posted, completed, "completions equal posts")
	assert.Equal(t, sends, res.Recvs, "SENDs received")
	assert.Zero(t, res.Bad, "SENDs received with other bytes")
	ctr := c.dev.Counters()
	assert.Zero(t, ctr.Get(counter.RetryExceededErr))
	t.Logf("%d MiB in %v (%.1f MiB/s), %d work requests; retransmissions %d, out of sequence %d, duplicates %d",
		moved>>20, el.Round(time.Millisecond), float64(moved)/(1<<20)/el.Seconds(), posted,
		ctr.Get(counter.CompleterRetryErr), ctr.Get(counter.OutOfSeqRequest), ctr.Get(counter.DuplicateRequest))
	if len(samples) > 0 {
		checkFlat(t, samples)
	}
}

// checkFlat prints the resource series and requires it flat: after the first minute of warm-up,
// the goroutine count does not change and the live heap and RSS end within 25% (plus 8 MiB) of
// where they were.
func checkFlat(t *testing.T, ss []sample) {
	for _, s := range ss {
		t.Logf("t=%-6v goroutines %4d live heap %7.1f MiB rss %7.1f MiB", s.at, s.goroutines, float64(s.heap)/(1<<20), float64(s.rss)/(1<<20))
	}
	var warm []sample
	for _, s := range ss {
		if s.at >= time.Minute {
			warm = append(warm, s)
		}
	}
	if len(warm) < 2 {
		return
	}
	first, last := warm[0], warm[len(warm)-1]
	assert.Equal(t, first.goroutines, last.goroutines, "goroutines")
	assert.LessOrEqual(t, last.heap, first.heap+first.heap/4+8<<20, "live heap grew")
	assert.LessOrEqual(t, last.rss, first.rss+first.rss/4+8<<20, "RSS grew")
}
