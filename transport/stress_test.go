package transport

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/qp"
)

// A stress flow drives one direction of an RC pair with a random mix of SEND, SEND with
// immediate, RDMA WRITE (with and without immediate), RDMA READ and atomics, and checks every
// byte, every completion and their order.
type stressFlow struct {
	t        *testing.T
	rng      *rand.Rand
	src, dst *hEndpoint
	local    hRegion // requester side: source data, then READ landing area, then atomic results
	remote   hRegion // responder side: READ source, WRITE target, receive buffers, atomic word
	nextID   uint64
	counter  uint64 // value of the remote fetch-and-add word
	bytes    int64
}

const (
	stressArea = 1 << 20 // each area of a region
	stressMax  = 48 << 10
)

// Region layout (offsets).
const (
	stLocalSrc   = 0
	stLocalRead  = stressArea
	stLocalAtom  = 2 * stressArea
	stLocalSize  = 2*stressArea + 4096
	stRemoteRead = 0
	stRemoteW    = stressArea
	stRemoteRecv = 2 * stressArea
	stRemoteAtom = 3 * stressArea
	stRemoteSize = 3*stressArea + 4096
)

func newStressFlow(t *testing.T, rng *rand.Rand, src, dst *hEndpoint) *stressFlow {
	f := &stressFlow{t: t, rng: rng, src: src, dst: dst,
		local: src.d.region(stLocalSize, 0), remote: dst.d.region(stRemoteSize, 0)}
	copy(f.local.buf[stLocalSrc:stLocalSrc+stressArea], hPattern(stressArea, rng.Uint64()))
	copy(f.remote.buf[stRemoteRead:stRemoteRead+stressArea], hPattern(stressArea, rng.Uint64()))
	return f
}

// stressOp is one posted work request and what it must produce.
type stressOp struct {
	id      uint64
	op      qp.WROpcode
	n       int
	srcOff  int // where the data comes from (local for SEND/WRITE, remote for READ)
	dstOff  int // where it must land
	recv    bool
	imm     uint32
	fetched uint64 // FETCH_ADD: the value it must return
}

func (f *stressFlow) size() int {
	switch r := f.rng.IntN(10); {
	case r < 5:
		return f.rng.IntN(300)
	case r < 9:
		return 300 + f.rng.IntN(5000)
	}
	return 5000 + f.rng.IntN(stressMax-5000)
}

// sges splits [off, off+n) of r into one to three SGEs.
func (f *stressFlow) sges(r hRegion, off, n int) []mr.SGE {
	k := 1 + f.rng.IntN(3)
	var s []mr.SGE
	for i := range k {
		part := n / k
		if i == k-1 {
			part = n - (k-1)*(n/k)
		}
		s = append(s, r.sge(off, part))
		off += part
	}
	return s
}

// chunk posts up to count random work requests and returns what they must do.
func (f *stressFlow) chunk(count int) []stressOp {
	var ops []stressOp
	var wrs []qp.SendWR
	readOff, writeOff, recvOff, srcOff := 0, 0, 0, 0
	for range count {
		n := f.size()
		if srcOff+n > stressArea || readOff+n > stressArea || writeOff+n > stressArea || recvOff+n > stressArea {
			break
		}
		f.nextID++
		o := stressOp{id: f.nextID, n: n}
		wr := qp.SendWR{ID: o.id, Flags: qp.SendSignaled}
		switch r := f.rng.IntN(20); {
		case r < 6:
			o.op, o.recv, o.srcOff, o.dstOff = qp.WRSend, true, srcOff, stRemoteRecv+recvOff
			if r == 0 {
				o.op, o.imm = qp.WRSendWithImm, f.rng.Uint32()
			}
			if n <= 512 && f.rng.IntN(2) == 0 {
				wr.Flags |= qp.SendInline
				wr.InlineData = f.local.buf[srcOff : srcOff+n]
			} else {
				wr.SGList = f.sges(f.local, srcOff, n)
			}
			f.dst.postRecv(o.id, f.sges(f.remote, o.dstOff, n+f.rng.IntN(64))...)
			recvOff += n + 64
			srcOff += n
		case r < 12:
			o.op, o.srcOff, o.dstOff = qp.WRRDMAWrite, srcOff, stRemoteW+writeOff
			if r == 6 {
				o.op, o.recv, o.imm = qp.WRRDMAWriteWithImm, true, f.rng.Uint32()
				f.dst.postRecv(o.id)
			}
			wr.SGList = f.sges(f.local, srcOff, n)
			wr.RDMA = qp.RDMAInfo{RemoteAddr: f.remote.mr.IOVA() + uint64(o.dstOff), RKey: f.remote.mr.RKey()}
			writeOff += n
			srcOff += n
		case r < 18:
			o.op, o.srcOff, o.dstOff = qp.WRRDMARead, stRemoteRead+f.rng.IntN(stressArea-n+1), stLocalRead+readOff
			wr.SGList = f.sges(f.local, o.dstOff, n)
			wr.RDMA = qp.RDMAInfo{RemoteAddr: f.remote.mr.IOVA() + uint64(o.srcOff), RKey: f.remote.mr.RKey()}
			readOff += n
		default:
			add := f.rng.Uint64N(1000)
			o.op, o.n, o.fetched = qp.WRAtomicFetchAndAdd, 8, f.counter
			o.dstOff = stLocalAtom + 8*(len(ops)%512)
			f.counter += add
			wr.SGList = []mr.SGE{f.local.sge(o.dstOff, 8)}
			wr.Atomic = qp.AtomicInfo{RemoteAddr: f.remote.mr.IOVA() + stRemoteAtom, RKey: f.remote.mr.RKey(), CompareAdd: add}
		}
		wr.Opcode, wr.ImmData = o.op, o.imm
		ops = append(ops, o)
		wrs = append(wrs, wr)
		f.bytes += int64(o.n)
	}
	f.src.post(wrs...)
	return ops
}

// check verifies the completions and memory after every op of a chunk completed.
func (f *stressFlow) check(ops []stressOp) {
	t := f.t
	t.Helper()
	wcs := f.src.pollSend()
	require.Len(t, wcs, len(ops), "QP %d: send completions for the posts", f.src.q.QPN())
	rwcs := f.dst.pollRecv()
	ri := 0
	for i, o := range ops {
		wc := wcs[i]
		require.Equal(t, o.id, wc.WRID, "completion %d: id", i)
		require.Equal(t, cq.WCSuccess, wc.Status, "completion %d (op %d, %v): status", i, o.id, o.op)
		require.Equal(t, o.op.CompletionOpcode(), wc.Opcode, "completion %d (op %d, %v): opcode", i, o.id, o.op)
		switch o.op {
		case qp.WRSend, qp.WRSendWithImm, qp.WRRDMAWrite, qp.WRRDMAWriteWithImm:
			require.True(t, bytes.Equal(f.remote.buf[o.dstOff:o.dstOff+o.n], f.local.buf[o.srcOff:o.srcOff+o.n]),
				"op %d (%v, %d bytes): data differs at the target", o.id, o.op, o.n)
		case qp.WRRDMARead:
			require.True(t, bytes.Equal(f.local.buf[o.dstOff:o.dstOff+o.n], f.remote.buf[o.srcOff:o.srcOff+o.n]),
				"op %d (READ, %d bytes): data differs", o.id, o.n)
		case qp.WRAtomicFetchAndAdd:
			require.Equal(t, o.fetched, binary.NativeEndian.Uint64(f.local.buf[o.dstOff:]), "op %d (FETCH_ADD)", o.id)
		}
		if o.recv {
			require.Less(t, ri, len(rwcs), "op %d: no receive completion", o.id)
			rw := rwcs[ri]
			ri++
			require.Equal(t, o.id, rw.WRID, "receive completion id")
			require.Equal(t, cq.WCSuccess, rw.Status, "op %d: receive completion status", o.id)
			require.Equal(t, uint32(o.n), rw.ByteLen, "op %d: receive completion length", o.id)
			if o.imm != 0 {
				require.Equal(t, o.imm, rw.ImmData, "op %d: imm", o.id)
			}
		}
	}
	require.Len(t, rwcs, ri, "extra receive completions")
	require.Equal(t, f.counter, binary.NativeEndian.Uint64(f.remote.buf[stRemoteAtom:]), "remote counter")
}

// runStress runs pairs RC QP pairs, both directions, with the faults until at least total bytes
// of payload moved.
func runStress(t *testing.T, seed uint64, faults hFaults, pairs, chunk int, total int64) {
	h := newHarness(t)
	h.seed(seed)
	h.faults = faults
	rng := rand.New(rand.NewPCG(seed, 77))
	mtus := []qp.MTU{qp.MTU256, qp.MTU1024, qp.MTU4096, qp.MTU1024}
	var flows []*stressFlow
	for i := range pairs {
		o := hQPOptions{mtu: mtus[i%len(mtus)], sqPSN: 0xFFFFFF - uint32(rng.IntN(3000)), timeout: 8, maxRdAtomic: 8}
		a, b := h.pair(o)
		flows = append(flows, newStressFlow(t, rng, a, b), newStressFlow(t, rng, b, a))
	}
	start := time.Now()
	var moved int64
	for moved < total {
		all := make([][]stressOp, len(flows))
		for i, f := range flows {
			all[i] = f.chunk(chunk)
		}
		h.runUntil(func() bool {
			for i, f := range flows {
				if f.src.scq.Len() < len(all[i]) {
					return false
				}
			}
			return true
		}, time.Hour)
		moved = 0
		for i, f := range flows {
			f.check(all[i])
			moved += f.bytes
		}
	}
	t.Logf("%d flows, %d MiB of payload in %v wall, %v fake; network %+v", len(flows), moved>>20,
		time.Since(start).Round(time.Millisecond), h.now.Sub(hStart).Round(time.Millisecond), h.stats)
	if faults.Loss > 0 {
		require.NotZero(t, h.stats.Lost, "no packet was lost")
	}
}

var stressFaults = hFaults{Loss: 0.05, Reorder: 0.02, Dup: 0.01, Corrupt: 0.001}

// TestStressLossy moves mixed traffic over several QP pairs through a network that loses 5%,
// reorders 2%, duplicates 1% and corrupts 0.1% of the packets.
func TestStressLossy(t *testing.T) {
	seeds, total := []uint64{1, 2}, int64(4<<20)
	if raceEnabled {
		seeds, total = seeds[:1], 1<<20
	}
	for _, seed := range seeds {
		runStress(t, seed, stressFaults, 3, 48, total)
	}
}

// TestStressClean is the same mix on a perfect network.
func TestStressClean(t *testing.T) {
	total := int64(4 << 20)
	if raceEnabled {
		total = 1 << 20
	}
	runStress(t, 3, hFaults{}, 2, 64, total)
}

// TestStressSoak moves 256 MiB through the lossy network. It runs only with GORXE_SOAK=1.
func TestStressSoak(t *testing.T) {
	if os.Getenv("GORXE_SOAK") == "" {
		t.Skip("set GORXE_SOAK=1 to move 256 MiB through the lossy network")
	}
	runStress(t, 9, stressFaults, 4, 128, 256<<20)
}
