package demo

import (
	"fmt"
	"math/rand/v2"

	"github.com/gorxe/gorxe"
)

// Connection parameters the demo uses, the ones rc_pingpong and perftest use on rxe.
const (
	pathMTU     = gorxe.MTU1024 // rxe's active MTU on a 1500-byte Ethernet, so messages span packets
	hopLimit    = 64
	ackTimeout  = 14 // 4.096 µs × 2^14 ≈ 67 ms
	retryCount  = 7
	rnrRetry    = 7
	minRNRTimer = 12 // 0.64 ms
	rdAtomic    = 16
	demoQKey    = 0x11111111
)

// createQP makes a QP of type t on s whose send and receive completions both go to s.cq.
func (s *side) createQP(t gorxe.QPType) (*gorxe.QP, error) {
	return s.dev.CreateQP(s.pd, &gorxe.QPInitAttr{
		SendCQ: s.cq, RecvCQ: s.cq, QPType: t,
		Cap: gorxe.QPCap{MaxSendWR: 64, MaxRecvWR: 64, MaxSendSGE: 4, MaxRecvSGE: 4, MaxInlineData: 256},
	})
}

// connected is a pair of QPs, one on each side, connected to each other (RC, UC) or able to reach
// each other (UD).
type connected struct {
	a, b *gorxe.QP
}

// link is what the two sides agree on out of band besides their QP numbers.
type link struct {
	fixed       bool   // use psnA and psnB; otherwise each connection draws random first PSNs
	psnA, psnB  uint32 // the first PSN each side sends with
	minRNRTimer uint8  // the RNR NAK timer code each side asks its peer to wait
}

// randomLink is how programs connect: random first PSNs (so a stale packet from an earlier
// connection is unlikely to fall in the window) and a short RNR timer.
var randomLink = link{minRNRTimer: minRNRTimer}

// connect creates a QP of type t on both sides and walks each RESET → INIT → RTR → RTS with exactly
// the attribute masks a libibverbs program uses.
func connect(t gorxe.QPType, a, b *side) (*connected, error) { return connectLink(t, a, b, randomLink) }

// connectLink is connect with the out-of-band agreement given.
func connectLink(t gorxe.QPType, a, b *side, agreed link) (*connected, error) {
	qa, err := a.createQP(t)
	if err != nil {
		return nil, fmt.Errorf("%s: create QP: %w", a.name, err)
	}
	qb, err := b.createQP(t)
	if err != nil {
		return nil, fmt.Errorf("%s: create QP: %w", b.name, err)
	}
	l := agreed
	if !l.fixed {
		l.psnA, l.psnB = rand.Uint32()&0xFFFFFF, rand.Uint32()&0xFFFFFF
	}
	if err := bringUp(t, qa, a, b, qb.QPN(), l.psnA, l.psnB, l.minRNRTimer); err != nil {
		return nil, fmt.Errorf("%s: %w", a.name, err)
	}
	if err := bringUp(t, qb, b, a, qa.QPN(), l.psnB, l.psnA, l.minRNRTimer); err != nil {
		return nil, fmt.Errorf("%s: %w", b.name, err)
	}
	return &connected{a: qa, b: qb}, nil
}

// bringUp moves q (on local, talking to remote's QP rqpn) to RTS. sqPSN is q's first PSN, rqPSN the
// peer's; rnrTimer is the RNR timer code q's RNR NAKs carry.
func bringUp(t gorxe.QPType, q *gorxe.QP, local, remote *side, rqpn, sqPSN, rqPSN uint32, rnrTimer uint8) error {
	access := gorxe.AccessRemoteWrite | gorxe.AccessRemoteRead | gorxe.AccessRemoteAtomic
	init := gorxe.QPAttr{State: gorxe.QPStateInit, PKeyIndex: 0, PortNum: 1}
	initMask := gorxe.QPAttrState | gorxe.QPAttrPKeyIndex | gorxe.QPAttrPort
	switch t {
	case gorxe.QPTypeUD:
		init.QKey = demoQKey
		initMask |= gorxe.QPAttrQKey
	case gorxe.QPTypeUC:
		init.AccessFlags = gorxe.AccessRemoteWrite
		initMask |= gorxe.QPAttrAccessFlags
	default:
		init.AccessFlags = access
		initMask |= gorxe.QPAttrAccessFlags
	}
	if err := q.Modify(&init, initMask); err != nil {
		return fmt.Errorf("RESET→INIT: %w", err)
	}

	rtr := gorxe.QPAttr{State: gorxe.QPStateRTR}
	rtrMask := gorxe.QPAttrState
	if t != gorxe.QPTypeUD {
		rtr.PathMTU = pathMTU
		rtr.DestQPNum = rqpn
		rtr.RQPSN = rqPSN
		rtr.AHAttr = remote.addressVector(local)
		rtrMask |= gorxe.QPAttrAV | gorxe.QPAttrPathMTU | gorxe.QPAttrDestQPN | gorxe.QPAttrRQPSN
		if t == gorxe.QPTypeRC {
			rtr.MaxDestRdAtomic = rdAtomic
			rtr.MinRNRTimer = rnrTimer
			rtrMask |= gorxe.QPAttrMaxDestRdAtomic | gorxe.QPAttrMinRNRTimer
		}
	}
	if err := q.Modify(&rtr, rtrMask); err != nil {
		return fmt.Errorf("INIT→RTR: %w", err)
	}

	rts := gorxe.QPAttr{State: gorxe.QPStateRTS, SQPSN: sqPSN}
	rtsMask := gorxe.QPAttrState | gorxe.QPAttrSQPSN
	if t == gorxe.QPTypeRC {
		rts.Timeout, rts.RetryCnt, rts.RNRRetry, rts.MaxRdAtomic = ackTimeout, retryCount, rnrRetry, rdAtomic
		rtsMask |= gorxe.QPAttrTimeout | gorxe.QPAttrRetryCnt | gorxe.QPAttrRNRRetry | gorxe.QPAttrMaxQPRdAtomic
	}
	if err := q.Modify(&rts, rtsMask); err != nil {
		return fmt.Errorf("RTR→RTS: %w", err)
	}
	return nil
}

// addressVector is how local reaches s: s's GID as destination, local's GID index as source.
func (s *side) addressVector(local *side) gorxe.AHAttr {
	return gorxe.AHAttr{
		IsGlobal: true,
		PortNum:  1,
		GRH: gorxe.GlobalRoute{
			DGID:      s.gid,
			SGIDIndex: local.gidIndex,
			HopLimit:  hopLimit,
		},
	}
}
