package demo

import (
	"bytes"
	"context"
	"fmt"

	"github.com/gorxe/gorxe"
)

// scene is one exchange of the wire walkthrough (docs/wire-walkthrough.md), run between a fresh
// pair of devices so that QP numbers and PSNs come out the same on every run.
type scene struct {
	name   string // the stem of its capture and diagram files
	title  string
	faults func() (gorxe.FaultConfig, error) // A's impairments; nil for none
	rnr    uint8                             // the RNR timer code B's RNR NAKs carry
	run    func(ctx context.Context, w *world, c *cues) (string, error)
}

// cues tells a scene what its devices did, for exchanges that must react to a packet.
type cues struct {
	rnrNAK <-chan struct{} // closed when B sends its first RNR NAK
}

// The walkthrough's first PSNs: round numbers that are easy to follow. Real connections draw
// them at random.
const (
	scenePSNA = 1000
	scenePSNB = 5000
)

// Timer codes: the demo's usual short RNR timer, and the walkthrough's long one, which leaves B
// ample time to post the missing receive before A tries again, so the capture shows one RNR NAK.
const (
	sceneRNRShort = minRNRTimer
	sceneRNRLong  = 24 // 40.96 ms
)

// The lost packet of the go-back-N scene: the second of the five packets of a 5000-byte WRITE.
// A sends nine datagrams: five, then four again from the lost one.
const (
	gbnLossRate = 0.2
	gbnSends    = 9
	gbnLost     = 1
)

var scenes = []scene{
	{name: "rc-send", title: "RC SEND of 3000 bytes", rnr: sceneRNRShort,
		run: func(ctx context.Context, w *world, _ *cues) (string, error) { return stepSend(ctx, w) }},
	{name: "rdma-write", title: "RDMA WRITE of 5000 bytes", rnr: sceneRNRShort,
		run: func(ctx context.Context, w *world, _ *cues) (string, error) { return stepWrite(ctx, w) }},
	{name: "rdma-read", title: "RDMA READ of 3000 bytes", rnr: sceneRNRShort,
		run: func(ctx context.Context, w *world, _ *cues) (string, error) { return readBytes(ctx, w, 3000) }},
	{name: "atomics", title: "compare-and-swap, then fetch-and-add", rnr: sceneRNRShort, run: sceneAtomics},
	{name: "go-back-n", title: "RDMA WRITE with its second packet lost: NAK and go-back-N", rnr: sceneRNRShort,
		faults: func() (gorxe.FaultConfig, error) { return lossSeed(gbnLossRate, gbnSends, gbnLost) },
		run:    func(ctx context.Context, w *world, _ *cues) (string, error) { return stepWrite(ctx, w) }},
	{name: "rnr", title: "SEND before B posted a receive: RNR NAK and retry", rnr: sceneRNRLong, run: sceneRNR},
	{name: "ud", title: "UD SEND of 512 bytes", rnr: sceneRNRShort,
		run: func(ctx context.Context, w *world, _ *cues) (string, error) { return stepUDSend(ctx, w) }},
}

func sceneAtomics(ctx context.Context, w *world, _ *cues) (string, error) {
	a, err := stepCmpSwap(ctx, w)
	if err != nil {
		return "", err
	}
	b, err := stepFetchAdd(ctx, w)
	return a + "; " + b, err
}

// readBytes has A read n bytes of B's memory.
func readBytes(ctx context.Context, w *world, n int) (string, error) {
	pattern(w.b.buf[offRead:offRead+n], 5)
	clear(w.a.buf[offRead : offRead+n])
	if err := w.rc.a.PostSend([]gorxe.SendWR{{ID: 14, Opcode: gorxe.WRRDMARead, Flags: gorxe.SendSignaled,
		SGList: w.a.sge(offRead, n), RDMA: gorxe.RDMAInfo{RemoteAddr: w.b.addr(offRead), RKey: w.b.mr.RKey()}}}); err != nil {
		return "", err
	}
	wc, err := w.a.wait(ctx, 1)
	if err != nil {
		return "", err
	}
	if err := expectWC("A", wc[0], gorxe.WCRDMARead); err != nil {
		return "", err
	}
	if !bytes.Equal(w.a.buf[offRead:offRead+n], w.b.buf[offRead:offRead+n]) {
		return "", fmt.Errorf("the buffer of A differs from the memory of B")
	}
	return fmt.Sprintf("A's buffer holds B's %d bytes", n), nil
}

// sceneRNR has A send before B posted a receive. B answers with an RNR NAK; only once that NAK is
// on the wire does B post the receive, and A's retry after the RNR timer lands in it.
func sceneRNR(ctx context.Context, w *world, c *cues) (string, error) {
	const n = 100
	pattern(w.a.buf[offSend:offSend+n], 8)
	if err := w.rc.a.PostSend([]gorxe.SendWR{{ID: 20, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled,
		SGList: w.a.sge(offSend, n)}}); err != nil {
		return "", err
	}
	select {
	case <-c.rnrNAK:
	case <-ctx.Done():
		return "", fmt.Errorf("no RNR NAK from B: %w", ctx.Err())
	}
	if err := postRecv(w.rc.b, w.b, 1, offSend, n); err != nil {
		return "", err
	}
	wcA, err := w.a.wait(ctx, 1)
	if err != nil {
		return "", err
	}
	if err := expectWC("A", wcA[0], gorxe.WCSend); err != nil {
		return "", err
	}
	wcB, err := w.b.wait(ctx, 1)
	if err != nil {
		return "", err
	}
	if err := expectWC("B", wcB[0], gorxe.WCRecv); err != nil {
		return "", err
	}
	if !bytes.Equal(w.b.buf[offSend:offSend+n], w.a.buf[offSend:offSend+n]) {
		return "", fmt.Errorf("the %d bytes B received differ from what A sent", wcB[0].ByteLen)
	}
	return fmt.Sprintf("B's receive, posted after the RNR NAK, holds A's %d bytes", n), nil
}
