package demo

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe"
)

// step is one narrated exchange: what it shows, and a function that performs it and verifies the
// result, returning what was verified.
type step struct {
	title string
	about string
	run   func(ctx context.Context, w *world) (string, error)
}

// world is what the steps share: both sides and their connected QPs.
type world struct {
	a, b   *side
	rc, uc *connected
	ud     *connected
	udAH   *gorxe.AH // A's address handle for B
}

// Buffer layout: each step uses its own region of both sides' registered buffers, so a bug that
// writes to the wrong place cannot be hidden by an earlier step's data.
const (
	offSend    = 0x00000
	offImm     = 0x10000
	offWrite   = 0x20000
	offWImm    = 0x30000
	offRead    = 0x40000
	offAtomic  = 0x50000 // 8-byte aligned
	offAtomRes = 0x50100
	offUC      = 0x60000
	offUD      = 0x70000
)

var steps = []step{
	{"RC SEND", "A sends 3000 bytes on a reliable connection into a receive buffer B posted in advance.\n" +
		"At path MTU 1024 the message takes three packets: FIRST, MIDDLE, LAST. Only LAST asks\n" +
		"for an acknowledgement (AckReq); B's single ACK covers the whole message.", stepSend},
	{"RC SEND with immediate data", "A sends 100 bytes plus 4 bytes of immediate data (ImmDt header), which B's\n" +
		"completion reports next to the data.", stepSendImm},
	{"RDMA WRITE", "A writes 5000 bytes straight into B's registered memory. The first packet carries\n" +
		"a RETH with B's address, rkey and the total length; B's CPU is not involved and B\n" +
		"gets no completion.", stepWrite},
	{"RDMA WRITE with immediate data", "Like WRITE, but the last packet carries immediate data and consumes a receive\n" +
		"request on B, so B learns that the data has landed.", stepWriteImm},
	{"RDMA READ", "A reads 10000 bytes from B's memory. One READ REQUEST (it reserves a PSN for each\n" +
		"response packet) brings back READ RESPONSE FIRST, MIDDLE..., LAST.", stepRead},
	{"ATOMIC compare-and-swap", "A swaps B's 8-byte counter from 0 to 42 if it still holds 0. The ATOMIC\n" +
		"ACKNOWLEDGE returns the value the counter had before.", stepCmpSwap},
	{"ATOMIC fetch-and-add", "A adds 8 to B's counter and gets the old value back.", stepFetchAdd},
	{"UC RDMA WRITE with immediate data", "An unreliable connection: the same packets as RC, but nobody acknowledges\n" +
		"them, and A's completion means only that the packets left.", stepUCWrite},
	{"UD SEND", "An unreliable datagram: one packet, addressed by an address handle, the remote\n" +
		"QPN and Q_Key (DETH header). B's receive buffer starts with 40 bytes of GRH: the\n" +
		"IP header of the packet, as a NIC delivers it.", stepUDSend},
}

// pattern fills b with bytes that differ per step and per position.
func pattern(b []byte, seed byte) {
	for i := range b {
		b[i] = seed + byte(i*7) + byte(i>>8)
	}
}

func postRecv(q *gorxe.QP, s *side, id uint64, off, n int) error {
	return q.PostRecv([]gorxe.RecvWR{{ID: id, SGList: s.sge(off, n)}})
}

// expectWC checks a completion's status and opcode.
func expectWC(who string, wc gorxe.WC, op gorxe.WCOpcode) error {
	if wc.Status != gorxe.WCSuccess {
		return fmt.Errorf("%s: completion %d failed: %v", who, wc.WRID, wc.Status)
	}
	if wc.Opcode != op {
		return fmt.Errorf("%s: completion %d has opcode %v, want %v", who, wc.WRID, wc.Opcode, op)
	}
	return nil
}

func sendAndReceive(ctx context.Context, w *world, wr gorxe.SendWR, recvOff, n int) (gorxe.WC, error) {
	if err := postRecv(w.rc.b, w.b, 1, recvOff, n); err != nil {
		return gorxe.WC{}, err
	}
	if err := w.rc.a.PostSend([]gorxe.SendWR{wr}); err != nil {
		return gorxe.WC{}, err
	}
	wcA, err := w.a.wait(ctx, 1)
	if err != nil {
		return gorxe.WC{}, err
	}
	if err := expectWC("A", wcA[0], gorxe.WCSend); err != nil {
		return gorxe.WC{}, err
	}
	wcB, err := w.b.wait(ctx, 1)
	if err != nil {
		return gorxe.WC{}, err
	}
	return wcB[0], expectWC("B", wcB[0], gorxe.WCRecv)
}

func stepSend(ctx context.Context, w *world) (string, error) {
	const n = 3000
	pattern(w.a.buf[offSend:offSend+n], 1)
	wc, err := sendAndReceive(ctx, w, gorxe.SendWR{ID: 10, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled,
		SGList: w.a.sge(offSend, n)}, offSend, n)
	if err != nil {
		return "", err
	}
	if wc.ByteLen != n || !bytes.Equal(w.b.buf[offSend:offSend+n], w.a.buf[offSend:offSend+n]) {
		return "", fmt.Errorf("the %d bytes B received differ from what A sent", wc.ByteLen)
	}
	return fmt.Sprintf("B's receive completed with %d bytes, identical to A's buffer", n), nil
}

func stepSendImm(ctx context.Context, w *world) (string, error) {
	const n, imm = 100, 0x1234abcd
	pattern(w.a.buf[offImm:offImm+n], 2)
	wc, err := sendAndReceive(ctx, w, gorxe.SendWR{ID: 11, Opcode: gorxe.WRSendWithImm, Flags: gorxe.SendSignaled,
		SGList: w.a.sge(offImm, n), ImmData: imm}, offImm, n)
	if err != nil {
		return "", err
	}
	if wc.WCFlags&gorxe.WCFlagWithImm == 0 || wc.ImmData != imm {
		return "", fmt.Errorf("the completion on B lacks the immediate data (flags %v, imm %#x)", wc.WCFlags, wc.ImmData)
	}
	if !bytes.Equal(w.b.buf[offImm:offImm+n], w.a.buf[offImm:offImm+n]) {
		return "", fmt.Errorf("the data on B differs from A's")
	}
	return fmt.Sprintf("B got %d bytes and immediate data %#x", n, uint32(imm)), nil
}

func stepWrite(ctx context.Context, w *world) (string, error) {
	const n = 5000
	pattern(w.a.buf[offWrite:offWrite+n], 3)
	if err := w.rc.a.PostSend([]gorxe.SendWR{{ID: 12, Opcode: gorxe.WRRDMAWrite, Flags: gorxe.SendSignaled,
		SGList: w.a.sge(offWrite, n), RDMA: gorxe.RDMAInfo{RemoteAddr: w.b.addr(offWrite), RKey: w.b.mr.RKey()}}}); err != nil {
		return "", err
	}
	wc, err := w.a.wait(ctx, 1)
	if err != nil {
		return "", err
	}
	if err := expectWC("A", wc[0], gorxe.WCRDMAWrite); err != nil {
		return "", err
	}
	if !bytes.Equal(w.b.buf[offWrite:offWrite+n], w.a.buf[offWrite:offWrite+n]) {
		return "", fmt.Errorf("the memory of B differs from what A wrote")
	}
	return fmt.Sprintf("B's memory holds A's %d bytes; B's CPU did nothing", n), nil
}

func stepWriteImm(ctx context.Context, w *world) (string, error) {
	const n, imm = 64, 0xfeed
	pattern(w.a.buf[offWImm:offWImm+n], 4)
	if err := postRecv(w.rc.b, w.b, 2, 0, 0); err != nil {
		return "", err
	}
	if err := w.rc.a.PostSend([]gorxe.SendWR{{ID: 13, Opcode: gorxe.WRRDMAWriteWithImm, Flags: gorxe.SendSignaled,
		SGList: w.a.sge(offWImm, n), ImmData: imm,
		RDMA: gorxe.RDMAInfo{RemoteAddr: w.b.addr(offWImm), RKey: w.b.mr.RKey()}}}); err != nil {
		return "", err
	}
	wcA, err := w.a.wait(ctx, 1)
	if err != nil {
		return "", err
	}
	if err := expectWC("A", wcA[0], gorxe.WCRDMAWrite); err != nil {
		return "", err
	}
	wcB, err := w.b.wait(ctx, 1)
	if err != nil {
		return "", err
	}
	if err := expectWC("B", wcB[0], gorxe.WCRecvRDMAWithImm); err != nil {
		return "", err
	}
	if wcB[0].ImmData != imm || wcB[0].ByteLen != n {
		return "", fmt.Errorf("the completion on B: imm %#x len %d, want %#x and %d", wcB[0].ImmData, wcB[0].ByteLen, imm, n)
	}
	if !bytes.Equal(w.b.buf[offWImm:offWImm+n], w.a.buf[offWImm:offWImm+n]) {
		return "", fmt.Errorf("the memory of B differs from what A wrote")
	}
	return fmt.Sprintf("B's memory holds the %d bytes and B's completion reports imm %#x", n, imm), nil
}

func stepRead(ctx context.Context, w *world) (string, error) { return readBytes(ctx, w, 10000) }

// atomic runs one atomic work request against B's counter and returns the original value A got.
func atomic(ctx context.Context, w *world, op gorxe.WROpcode, compareAdd, swap uint64) (uint64, error) {
	if err := w.rc.a.PostSend([]gorxe.SendWR{{ID: 15, Opcode: op, Flags: gorxe.SendSignaled,
		SGList: w.a.sge(offAtomRes, 8),
		Atomic: gorxe.AtomicInfo{RemoteAddr: w.b.addr(offAtomic), RKey: w.b.mr.RKey(), CompareAdd: compareAdd, Swap: swap}}}); err != nil {
		return 0, err
	}
	wc, err := w.a.wait(ctx, 1)
	if err != nil {
		return 0, err
	}
	want := gorxe.WCCompSwap
	if op == gorxe.WRAtomicFetchAndAdd {
		want = gorxe.WCFetchAdd
	}
	if err := expectWC("A", wc[0], want); err != nil {
		return 0, err
	}
	return binary.NativeEndian.Uint64(w.a.buf[offAtomRes:]), nil
}

func counter(s *side) uint64 { return binary.NativeEndian.Uint64(s.buf[offAtomic:]) }

func stepCmpSwap(ctx context.Context, w *world) (string, error) {
	binary.NativeEndian.PutUint64(w.b.buf[offAtomic:], 0)
	orig, err := atomic(ctx, w, gorxe.WRAtomicCmpAndSwp, 0, 42)
	if err != nil {
		return "", err
	}
	if orig != 0 || counter(w.b) != 42 {
		return "", fmt.Errorf("compare-and-swap returned %d and left %d, want 0 and 42", orig, counter(w.b))
	}
	return "A got the old value 0; B's counter is now 42", nil
}

func stepFetchAdd(ctx context.Context, w *world) (string, error) {
	orig, err := atomic(ctx, w, gorxe.WRAtomicFetchAndAdd, 8, 0)
	if err != nil {
		return "", err
	}
	if orig != 42 || counter(w.b) != 50 {
		return "", fmt.Errorf("fetch-and-add returned %d and left %d, want 42 and 50", orig, counter(w.b))
	}
	return "A got the old value 42; B's counter is now 50", nil
}

func stepUCWrite(ctx context.Context, w *world) (string, error) {
	const n, imm = 2000, 0xc0ffee
	pattern(w.a.buf[offUC:offUC+n], 6)
	if err := postRecv(w.uc.b, w.b, 4, 0, 0); err != nil {
		return "", err
	}
	wr := gorxe.SendWR{ID: 16, Opcode: gorxe.WRRDMAWriteWithImm, Flags: gorxe.SendSignaled,
		SGList: w.a.sge(offUC, n), ImmData: imm,
		RDMA: gorxe.RDMAInfo{RemoteAddr: w.b.addr(offUC), RKey: w.b.mr.RKey()}}
	// Nothing acknowledges UC packets: if one is lost, B drops the whole message and only the
	// missing receive completion tells. The application has to send again.
	wcB, resent, err := untilReceived(ctx, w, w.uc.a, wr, gorxe.WCRDMAWrite)
	if err != nil {
		return "", err
	}
	if err := expectWC("B", wcB, gorxe.WCRecvRDMAWithImm); err != nil {
		return "", err
	}
	if !bytes.Equal(w.b.buf[offUC:offUC+n], w.a.buf[offUC:offUC+n]) {
		return "", fmt.Errorf("the memory of B differs from what A wrote")
	}
	return fmt.Sprintf("B's memory holds A's %d bytes; its completion reports imm %#x%s", n, imm, resent), nil
}

func stepUDSend(ctx context.Context, w *world) (string, error) {
	const n, grh = 512, gorxe.GRHSize
	pattern(w.a.buf[offUD:offUD+n], 7)
	if err := w.ud.b.PostRecv([]gorxe.RecvWR{{ID: 3, SGList: w.b.sge(offUD, n+grh)}}); err != nil {
		return "", err
	}
	wr := gorxe.SendWR{ID: 17, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled, SGList: w.a.sge(offUD, n),
		UD: gorxe.UDInfo{AH: w.udAH, RemoteQPN: w.ud.b.QPN(), RemoteQKey: demoQKey}}
	wcB, resent, err := untilReceived(ctx, w, w.ud.a, wr, gorxe.WCSend)
	if err != nil {
		return "", err
	}
	if err := expectWC("B", wcB, gorxe.WCRecv); err != nil {
		return "", err
	}
	got := w.b.buf[offUD : offUD+grh+n]
	if wcB.ByteLen != grh+n || !bytes.Equal(got[grh:], w.a.buf[offUD:offUD+n]) {
		return "", fmt.Errorf("the %d bytes B received differ from A's datagram", wcB.ByteLen)
	}
	if wcB.SrcQP != w.ud.a.QPN() || wcB.WCFlags&gorxe.WCFlagGRH == 0 {
		return "", fmt.Errorf("the completion on B: source QP %#x flags %v, want %#x with GRH", wcB.SrcQP, wcB.WCFlags, w.ud.a.QPN())
	}
	// IPv4: 20 zero bytes, then the IPv4 header, whose source address is A's.
	src, _ := netip.AddrFromSlice(got[20+12 : 20+16])
	if w.a.gid.Addr().Is4() && src != w.a.gid.Addr() {
		return "", fmt.Errorf("the GRH names source %v, want %v", src, w.a.gid.Addr())
	}
	return fmt.Sprintf("B got %d bytes from QPN %#06x after a %d-byte GRH naming %v%s", n, wcB.SrcQP, grh, src, resent), nil
}

// unreliableTries bounds how often an unreliable step sends again after a loss, and lossWait is how
// long it waits for the receiver before deciding the message was lost.
const (
	unreliableTries = 20
	lossWait        = 300 * time.Millisecond
)

// untilReceived posts wr on the unreliable QP q until B's receive completes, as an application on
// UC or UD has to: the transport does not retransmit. It returns B's completion and a note on how
// many sends were lost.
func untilReceived(ctx context.Context, w *world, q *gorxe.QP, wr gorxe.SendWR, sendOp gorxe.WCOpcode) (gorxe.WC, string, error) {
	for try := 1; try <= unreliableTries; try++ {
		if err := q.PostSend([]gorxe.SendWR{wr}); err != nil {
			return gorxe.WC{}, "", err
		}
		wcA, err := w.a.wait(ctx, 1)
		if err != nil {
			return gorxe.WC{}, "", err
		}
		if err := expectWC("A", wcA[0], sendOp); err != nil {
			return gorxe.WC{}, "", err
		}
		wait, cancel := context.WithTimeout(ctx, lossWait)
		wcB, err := w.b.wait(wait, 1)
		cancel()
		if err == nil {
			note := ""
			if try > 1 {
				note = fmt.Sprintf(" (after %d lost attempts: UC and UD do not retransmit)", try-1)
			}
			return wcB[0], note, nil
		}
		if ctx.Err() != nil {
			return gorxe.WC{}, "", err
		}
	}
	return gorxe.WC{}, "", fmt.Errorf("nothing reached B in %d attempts", unreliableTries)
}
