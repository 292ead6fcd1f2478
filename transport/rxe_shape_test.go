package transport

import (
	"encoding/csv"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// The packets gorxe's engines exchange must have the shapes kernel rxe's have in the bundled
// capture (Wireshark's decoding of it, in the packet package's testdata): same opcodes in the
// same order, AckReq on the same packets, the same pad counts, P_Key, PSN steps, RETH lengths,
// AETH syndromes and MSNs, and the same UDP lengths.

const rxeCaptureCSV = "../packet/testdata/kernel-rxe-rc-uc-ud.tshark.csv"

// shape is what two implementations must agree on for one packet; PSNs are relative to the
// exchange's first packet.
type shape struct {
	opcode   packet.Opcode
	ackReq   bool
	pad      uint8
	pkey     uint16
	psnDelta int32
	dmaLen   int64 // -1 without a RETH
	syndrome int   // -1 without an AETH
	msn      int64 // -1 without an AETH
	udpLen   int
}

// captureShapes returns the shapes of the capture's frames first..last (1-based, inclusive).
func captureShapes(t *testing.T, first, last int) []shape {
	t.Helper()
	f, err := os.Open(rxeCaptureCSV)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	num := func(row []string, name string) int64 {
		v := row[col[name]]
		if v == "" {
			return -1
		}
		n, err := strconv.ParseInt(v, 0, 64)
		require.NoError(t, err, "%s %q", name, v)
		return n
	}
	var out []shape
	var base int64
	for _, row := range rows[1:] {
		frame := int(num(row, "frame.number"))
		if frame < first || frame > last {
			continue
		}
		psn := num(row, "infiniband.bth.psn")
		if len(out) == 0 {
			base = psn
		}
		out = append(out, shape{
			opcode:   packet.Opcode(num(row, "infiniband.bth.opcode")),
			ackReq:   num(row, "infiniband.bth.a") == 1,
			pad:      uint8(num(row, "infiniband.bth.padcnt")),
			pkey:     uint16(num(row, "infiniband.bth.p_key")),
			psnDelta: int32(psn - base),
			dmaLen:   num(row, "infiniband.reth.dmalen"),
			syndrome: int(num(row, "infiniband.aeth.syndrome")),
			msn:      num(row, "infiniband.aeth.msn"),
			udpLen:   int(num(row, "udp.length")),
		})
	}
	return out
}

// traceShapes returns the shapes of the packets the harness carried, leaving out the opcodes
// in skip (the capture was thinned of long runs of middle packets).
func traceShapes(t *testing.T, h *harness, skip ...packet.Opcode) []shape {
	t.Helper()
	var out []shape
	var base packet.PSN
next:
	for _, p := range h.trace {
		var pp packet.Parsed
		require.NoError(t, packet.Parse(p.buf, &pp))
		bth := pp.BTH()
		for _, op := range skip {
			if bth.Opcode() == op {
				continue next
			}
		}
		if len(out) == 0 {
			base = bth.PSN()
		}
		s := shape{opcode: bth.Opcode(), ackReq: bth.AckReq(), pad: bth.PadCount(), pkey: bth.PKey(),
			psnDelta: bth.PSN().Diff(base), dmaLen: -1, syndrome: -1, msn: -1, udpLen: len(p.buf) + packet.UDPHeaderSize}
		if r := pp.RETH(); r != nil {
			s.dmaLen = int64(r.DMALength())
		}
		if a := pp.AETH(); a != nil {
			s.syndrome, s.msn = int(a.Syndrome()), int64(a.MSN())
		}
		out = append(out, s)
	}
	return out
}

func compareShapes(t *testing.T, what string, got, want []shape) {
	t.Helper()
	require.Len(t, got, len(want), "%s: gorxe sent these, kernel rxe %+v", what, want)
	for i := range want {
		assert.Equal(t, want[i], got[i], "%s packet %d", what, i)
	}
}

// assertSymmetricPorts checks what rxe's flow-label formula gives: both ends of an RC connection
// send from the same UDP source port.
func assertSymmetricPorts(t *testing.T, h *harness) {
	t.Helper()
	ports := map[uint16]bool{}
	for _, p := range h.trace {
		ports[p.path.Src.Port()] = true
	}
	assert.Len(t, ports, 1, "the UDP source ports the two ends sent from")
}

// kernelGSIHeaders are the BTH and DETH of the CM REQ kernel rxe sent on QP1, frame 2411 of
// packet/testdata's capture: UD_SEND_ONLY, P_Key 0xffff, to QP 1 with AckReq set, PSN 0, Q_Key
// 0x80010000, from QP 1.
var kernelGSIHeaders = []byte{0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x80, 0x00, 0x00, 0x00,
	0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}

// TestMatchesKernelRxe compares what gorxe's engines put on the wire with what kernel rxe sent
// in the bundled capture.
func TestMatchesKernelRxe(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T)
	}{
		// ibv_rc_pingpong -s 4096 at MTU 1024: SEND FIRST, MIDDLE, MIDDLE, LAST with AckReq, then
		// one ACK.
		{"RC SEND of ibv_rc_pingpong", func(t *testing.T) {
			x := newE2E(t, hQPOptions{mtu: qp.MTU1024})
			x.h.keep = true
			x.b.postRecv(1, x.bBuf.sge(0, 4096))
			x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 4096)}})
			compareShapes(t, "RC SEND", traceShapes(t, x.h), captureShapes(t, 1, 5))
			assertSymmetricPorts(t, x.h)
		}},
		// ib_read_bw -s 65536 at MTU 1024: a READ REQUEST with AckReq for the whole length,
		// answered by READ RESPONSE FIRST (AETH) ... LAST (AETH), both with the MSN of the READ.
		{"RC READ of ib_read_bw", func(t *testing.T) {
			x := newE2E(t, hQPOptions{mtu: qp.MTU1024})
			x.h.keep = true
			x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMARead, SGList: []mr.SGE{x.aBuf.sge(0, 65536)},
				RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA(), RKey: x.bBuf.mr.RKey()}})
			compareShapes(t, "RC READ", traceShapes(t, x.h, packet.RCRDMAReadResponseMiddle), captureShapes(t, 1511, 1513))
			assertSymmetricPorts(t, x.h)
		}},
		// Sends a MAD-sized message on the GSI QP and checks its BTH and DETH byte for byte against
		// kernel rxe's: the same opcode, P_Key, destination QP, AckReq bit, PSN, Q_Key and source
		// QP.
		{"GSI BTH and DETH", func(t *testing.T) {
			h, a, _, ah := gsiPair(t)
			a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{a.d.region(256, 0).sge(0, 256)},
				UD: qp.UDInfo{AH: ah, RemoteQPN: 1, RemoteQKey: packet.GSIQKey}})
			h.settle(time.Second)
			require.Len(t, h.trace, 1)
			require.Equal(t, kernelGSIHeaders, h.trace[0].buf[:packet.BTHSize+packet.DETHSize])
		}},
		// Checks that a UD datagram goes with AckReq clear, as kernel rxe's do (every UD pingpong
		// datagram of that capture, frame 247 the first).
		{"UD AckReq clear", func(t *testing.T) {
			h := newHarness(t)
			h.keep = true
			a, b, ah := udPair(t, h, 0x11111111)
			a.post(qp.SendWR{ID: 1, Opcode: qp.WRSend, Flags: qp.SendSignaled, SGList: []mr.SGE{a.d.region(64, 0).sge(0, 64)},
				UD: qp.UDInfo{AH: ah, RemoteQPN: b.q.QPN(), RemoteQKey: 0x11111111}})
			h.settle(time.Second)
			require.Len(t, h.trace, 1)
			var pp packet.Parsed
			require.NoError(t, packet.Parse(h.trace[0].buf, &pp))
			require.False(t, pp.BTH().AckReq())
		}},
	} {
		t.Run(tc.name, tc.run)
	}
}
