package perftest

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// rtsQP returns an RC QP on dev in RTS with ACK timeout code timeout and retry count retryCnt.
func rtsQP(t *testing.T, dev *gorxe.Device, timeout, retryCnt uint8) *gorxe.QP {
	t.Helper()
	pd, err := dev.AllocPD()
	require.NoError(t, err)
	cq, err := dev.CreateCQ(16, nil)
	require.NoError(t, err)
	q, err := dev.CreateQP(pd, &gorxe.QPInitAttr{SendCQ: cq, RecvCQ: cq, QPType: gorxe.QPTypeRC,
		Cap: gorxe.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(t, err)
	a := gorxe.QPAttr{State: gorxe.QPStateInit, PortNum: 1}
	require.NoError(t, q.Modify(&a, gorxe.QPAttrState|gorxe.QPAttrPort|gorxe.QPAttrPKeyIndex|gorxe.QPAttrAccessFlags))
	a = gorxe.QPAttr{State: gorxe.QPStateRTR, PathMTU: gorxe.MTU1024, DestQPNum: 0x99, MinRNRTimer: 12,
		AHAttr: gorxe.AHAttr{IsGlobal: true, PortNum: 1, GRH: gorxe.GlobalRoute{DGID: gorxe.GIDFromAddr(netip.MustParseAddr("10.0.0.2")), HopLimit: 1, SGIDIndex: 1}}}
	require.NoError(t, q.Modify(&a, gorxe.QPAttrState|gorxe.QPAttrAV|gorxe.QPAttrPathMTU|gorxe.QPAttrDestQPN|
		gorxe.QPAttrRQPSN|gorxe.QPAttrMaxDestRdAtomic|gorxe.QPAttrMinRNRTimer))
	a = gorxe.QPAttr{State: gorxe.QPStateRTS, Timeout: timeout, RetryCnt: retryCnt, RNRRetry: 7}
	require.NoError(t, q.Modify(&a, gorxe.QPAttrState|gorxe.QPAttrTimeout|gorxe.QPAttrRetryCnt|gorxe.QPAttrRNRRetry|
		gorxe.QPAttrSQPSN|gorxe.QPAttrMaxQPRdAtomic))
	return q
}

// A bandwidth client on RC waits for its completions as long as its QPs may still be retrying,
// (retry_cnt + 1) × 4 × the ACK timeout of the longest on top of --timeout, so that
// RETRY_EXC_ERR, not the watchdog, ends a run against a peer that stopped answering. Receivers,
// UC and UD, and --timeout=0 are unchanged.
func TestRequesterStall(t *testing.T) {
	const size = 1 << 20 // one second at slowestRate
	dev, _ := fabricPair(t)
	qps := []*gorxe.QP{rtsQP(t, dev, 18, 2), rtsQP(t, dev, 18, 7), rtsQP(t, dev, 14, 7)}
	ackTimeout18 := 4096 * time.Nanosecond << 18
	rc := Params{Timeout: 10 * time.Second, Conn: RC}
	for _, tc := range []struct {
		name string
		p    Params
		qps  []*gorxe.QP
		want time.Duration
	}{
		{"RC, -u 18, retry_cnt 2", rc, qps[:1], 11*time.Second + 3*4*ackTimeout18},
		{"RC, the longest of three QPs", rc, qps, 11*time.Second + 8*4*ackTimeout18},
		{"UC", Params{Timeout: 10 * time.Second, Conn: UC}, qps, 11 * time.Second},
		{"--timeout=0", Params{Conn: RC}, qps, 1 << 62},
	} {
		r := &rdma{p: &tc.p, qps: tc.qps}
		assert.Equal(t, tc.want, r.requesterStall(size), tc.name)
	}
	r := &rdma{p: &rc, qps: qps}
	assert.Equal(t, 11*time.Second, r.stall(size), "the receiving side's limit stays --timeout plus transfer time")
}
