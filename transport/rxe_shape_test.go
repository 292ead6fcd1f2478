package transport

import (
	"encoding/csv"
	"os"
	"strconv"
	"testing"

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

// ibv_rc_pingpong -s 4096 at MTU 1024: SEND FIRST, MIDDLE, MIDDLE, LAST with AckReq, then one ACK.
func TestShapeLikeRxeRCSend(t *testing.T) {
	x := newE2E(t, hQPOptions{mtu: qp.MTU1024})
	x.h.keep = true
	x.b.postRecv(1, x.bBuf.sge(0, 4096))
	x.one(qp.SendWR{ID: 1, Opcode: qp.WRSend, SGList: []mr.SGE{x.aBuf.sge(0, 4096)}})
	compareShapes(t, "RC SEND", traceShapes(t, x.h), captureShapes(t, 1, 5))
	assertSymmetricPorts(t, x.h)
}

// ib_read_bw -s 65536 at MTU 1024: a READ REQUEST with AckReq for the whole length, answered by
// READ RESPONSE FIRST (AETH) ... LAST (AETH), both with the MSN of the READ.
func TestShapeLikeRxeRCRead(t *testing.T) {
	x := newE2E(t, hQPOptions{mtu: qp.MTU1024})
	x.h.keep = true
	x.one(qp.SendWR{ID: 1, Opcode: qp.WRRDMARead, SGList: []mr.SGE{x.aBuf.sge(0, 65536)},
		RDMA: qp.RDMAInfo{RemoteAddr: x.bBuf.mr.IOVA(), RKey: x.bBuf.mr.RKey()}})
	compareShapes(t, "RC READ", traceShapes(t, x.h, packet.RCRDMAReadResponseMiddle), captureShapes(t, 1511, 1513))
	assertSymmetricPorts(t, x.h)
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
