package main

import (
	"bufio"
	"context"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// TestExitSendsHeldACKs runs testdata/exitack.c against an RC QP of gorxe's Go API: the program
// answers the QP's first SEND, takes the completion of its second and returns from main with
// everything still open. The library keeps the ACK of a message a poll finds back for the QP's
// next send (internal/stack's ackhold.go), and the program makes none; at exit the library sends
// what it keeps, so the second SEND completes. Without that, the Go side retransmits to a
// process that is gone and the SEND ends in IBV_WC_RETRY_EXC_ERR after its retries (eight of
// 67 ms or more).
func TestExitSendsHeldACKs(t *testing.T) {
	needLibrary(t)
	bin := buildProgram(t, "exitack")
	cAddr, goAddr := addressPair()

	dev, err := gorxe.Open(gorxe.Config{Addr: netip.MustParseAddr(goAddr)})
	require.NoError(t, err)
	defer dev.Close()
	pd, err := dev.AllocPD()
	require.NoError(t, err)
	scq, err := dev.CreateCQ(4, nil)
	require.NoError(t, err)
	rch, err := dev.CreateCompChannel()
	require.NoError(t, err)
	rcq, err := dev.CreateCQ(4, rch)
	require.NoError(t, err)
	buf := make([]byte, 128)
	mr, err := pd.RegMR(buf, gorxe.AccessLocalWrite)
	require.NoError(t, err)
	qp, err := dev.CreateQP(pd, &gorxe.QPInitAttr{SendCQ: scq, RecvCQ: rcq, QPType: gorxe.QPTypeRC,
		Cap: gorxe.QPCap{MaxSendWR: 2, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, goAddr)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+libDir, "GORXE_ADDR="+cAddr)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	require.NoError(t, err, "stderr: %s", stderr.String())
	cQPN, err := strconv.ParseUint(strings.TrimSpace(line), 10, 32)
	require.NoError(t, err)

	// As ibv_rc_pingpong connects: timeout 14 (67 ms), seven retries, which a loaded machine's
	// stalls stay well within.
	for _, s := range []struct {
		attr gorxe.QPAttr
		mask gorxe.QPAttrMask
	}{
		{gorxe.QPAttr{State: gorxe.QPStateInit, PortNum: 1}, gorxe.QPAttrState | gorxe.QPAttrPKeyIndex | gorxe.QPAttrPort | gorxe.QPAttrAccessFlags},
		{gorxe.QPAttr{State: gorxe.QPStateRTR, PathMTU: gorxe.MTU1024, DestQPNum: uint32(cQPN), MaxDestRdAtomic: 1, MinRNRTimer: 12,
			AHAttr: gorxe.AHAttr{IsGlobal: true, PortNum: 1, GRH: gorxe.GlobalRoute{
				DGID: gorxe.GIDFromAddr(netip.MustParseAddr(cAddr)), SGIDIndex: 1, HopLimit: 64}}},
			gorxe.QPAttrState | gorxe.QPAttrAV | gorxe.QPAttrPathMTU | gorxe.QPAttrDestQPN | gorxe.QPAttrRQPSN | gorxe.QPAttrMaxDestRdAtomic | gorxe.QPAttrMinRNRTimer},
		{gorxe.QPAttr{State: gorxe.QPStateRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MaxRdAtomic: 1},
			gorxe.QPAttrState | gorxe.QPAttrTimeout | gorxe.QPAttrRetryCnt | gorxe.QPAttrRNRRetry | gorxe.QPAttrSQPSN | gorxe.QPAttrMaxQPRdAtomic},
	} {
		require.NoError(t, qp.Modify(&s.attr, s.mask))
	}
	require.NoError(t, qp.PostRecv([]gorxe.RecvWR{{SGList: []gorxe.SGE{{Addr: mr.Addr() + 64, Length: 64, LKey: mr.LKey()}}}}))
	_, err = stdin.Write([]byte(strconv.FormatUint(uint64(qp.QPN()), 10) + "\n"))
	require.NoError(t, err)
	line, err = out.ReadString('\n')
	require.NoError(t, err, "stderr: %s", stderr.String())
	require.Equal(t, "ready\n", line)

	send := func(id uint64) {
		t.Helper()
		require.NoError(t, qp.PostSend([]gorxe.SendWR{{ID: id, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled,
			SGList: []gorxe.SGE{{Addr: mr.Addr(), Length: 64, LKey: mr.LKey()}}}}))
	}
	// waitWC busy-polls cq for one completion, failing after a while.
	waitWC := func(cq *gorxe.CQ) gorxe.WC {
		t.Helper()
		var wc [1]gorxe.WC
		for end := time.Now().Add(20 * time.Second); cq.Poll(wc[:]) == 0; {
			require.True(t, time.Now().Before(end), "no completion; the program's stderr: %s", stderr.String())
		}
		return wc[0]
	}
	send(1)
	require.NoError(t, rcq.Wait(ctx))
	require.Equal(t, gorxe.WCSuccess, waitWC(rcq).Status, "the program's answer")
	require.Equal(t, gorxe.WCSuccess, waitWC(scq).Status, "the first SEND")
	send(2)
	require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
	wc := waitWC(scq)
	require.Equal(t, uint64(2), wc.WRID)
	require.Equal(t, gorxe.WCSuccess, wc.Status, "the SEND whose ACK the program's library held when it exited")
}

// TestExitFromSignalHandler runs testdata/exitack.c's alarm mode: a SIGALRM handler calls exit(0)
// while the program busy-polls an empty CQ, so that the library's exit handler starts on a thread
// that may be inside a call into Go, which keeps the runtime's one processor. The handler sends
// from a thread of its own and waits for it at most 100 ms, so the program still ends, cleanly,
// every time.
func TestExitFromSignalHandler(t *testing.T) {
	needLibrary(t)
	bin := buildProgram(t, "exitack")
	for range 20 {
		addr, _ := addressPair()
		p := start(t, addr, bin, "alarm")
		p.wait(t)
		require.Empty(t, p.err.String())
	}
}
