package soak

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe"
)

const (
	writeSize = 64 << 10 // RDMA WRITE and READ size
	sendSize  = 8 << 10  // SEND size
	recvDepth = 16       // receive WQEs the server keeps posted per QP
	slotSize  = writeSize + 64
)

var (
	clientAddr = netip.MustParseAddr("127.0.0.1")
	serverAddr = netip.MustParseAddr("127.0.0.2")
)

// hello is what each side tells the other before connecting.
type hello struct {
	Port    uint16
	QPNs    []uint32
	Addr    uint64 // server: base of the slots
	RKey    uint32
	Timeout uint8
	Err     string // server: why it could not start
}

// side is one process's device, QPs and memory.
type side struct {
	dev *gorxe.Device
	pd  *gorxe.PD
	ch  *gorxe.CompChannel
	cq  *gorxe.CQ
	qps []*gorxe.QP
	buf []byte
	mr  *gorxe.MR
}

func openSide(addr netip.Addr, port uint16, nqp, bufSize int) (*side, error) {
	s := &side{}
	var err error
	if s.dev, err = gorxe.Open(gorxe.Config{Addr: addr, Port: port}); err != nil {
		return nil, err
	}
	if s.pd, err = s.dev.AllocPD(); err != nil {
		return nil, err
	}
	if s.ch, err = s.dev.CreateCompChannel(); err != nil {
		return nil, err
	}
	if s.cq, err = s.dev.CreateCQ(nqp*(recvDepth+8), s.ch); err != nil {
		return nil, err
	}
	s.buf = make([]byte, bufSize)
	access := gorxe.AccessLocalWrite | gorxe.AccessRemoteWrite | gorxe.AccessRemoteRead | gorxe.AccessRemoteAtomic
	if s.mr, err = s.pd.RegMR(s.buf, access); err != nil {
		return nil, err
	}
	for range nqp {
		q, err := s.dev.CreateQP(s.pd, &gorxe.QPInitAttr{SendCQ: s.cq, RecvCQ: s.cq, QPType: gorxe.QPTypeRC,
			Cap: gorxe.QPCap{MaxSendWR: 16, MaxRecvWR: recvDepth, MaxSendSGE: 1, MaxRecvSGE: 1}})
		if err != nil {
			return nil, err
		}
		s.qps = append(s.qps, q)
	}
	return s, nil
}

func (s *side) qpns() []uint32 {
	var n []uint32
	for _, q := range s.qps {
		n = append(n, q.QPN())
	}
	return n
}

// connect brings QP i to RTS towards peer QPN peer[i] at addr.
func (s *side) connect(peer []uint32, addr netip.Addr, timeout uint8) error {
	if len(peer) != len(s.qps) {
		return fmt.Errorf("peer has %d QPs, this side %d", len(peer), len(s.qps))
	}
	for i, q := range s.qps {
		steps := []struct {
			a gorxe.QPAttr
			m gorxe.QPAttrMask
		}{
			{gorxe.QPAttr{State: gorxe.QPStateInit, PortNum: 1,
				AccessFlags: gorxe.AccessRemoteWrite | gorxe.AccessRemoteRead | gorxe.AccessRemoteAtomic},
				gorxe.QPAttrState | gorxe.QPAttrPKeyIndex | gorxe.QPAttrPort | gorxe.QPAttrAccessFlags},
			{gorxe.QPAttr{State: gorxe.QPStateRTR, PathMTU: gorxe.MTU4096, DestQPNum: peer[i], RQPSN: 0,
				MaxDestRdAtomic: 4, MinRNRTimer: 1,
				AHAttr: gorxe.AHAttr{IsGlobal: true, PortNum: 1, GRH: gorxe.GlobalRoute{DGID: gorxe.GIDFromAddr(addr), SGIDIndex: 1, HopLimit: 64}}},
				gorxe.QPAttrState | gorxe.QPAttrAV | gorxe.QPAttrPathMTU | gorxe.QPAttrDestQPN | gorxe.QPAttrRQPSN |
					gorxe.QPAttrMaxDestRdAtomic | gorxe.QPAttrMinRNRTimer},
			{gorxe.QPAttr{State: gorxe.QPStateRTS, Timeout: timeout, RetryCnt: 7, RNRRetry: 7, SQPSN: 0, MaxRdAtomic: 4},
				gorxe.QPAttrState | gorxe.QPAttrTimeout | gorxe.QPAttrRetryCnt | gorxe.QPAttrRNRRetry | gorxe.QPAttrSQPSN |
					gorxe.QPAttrMaxQPRdAtomic},
		}
		for _, st := range steps {
			if err := q.Modify(&st.a, st.m); err != nil {
				return fmt.Errorf("QP %d to %v: %w", q.QPN(), st.a.State, err)
			}
		}
	}
	return nil
}

// poll returns completions, sleeping on the completion channel when there are none; it fails
// after idle without any.
func (s *side) poll(ctx context.Context, wcs []gorxe.WC, idle time.Duration) (int, error) {
	for {
		if n := s.cq.Poll(wcs); n > 0 {
			return n, nil
		}
		if err := s.cq.ReqNotify(false); err != nil {
			return 0, err
		}
		if n := s.cq.Poll(wcs); n > 0 {
			return n, nil
		}
		wctx, cancel := context.WithTimeout(ctx, idle)
		c, err := s.ch.GetEvent(wctx)
		cancel()
		if err != nil {
			return 0, err
		}
		c.AckEvents(1)
	}
}

func (s *side) sge(off, n int) []gorxe.SGE {
	return []gorxe.SGE{{Addr: s.mr.Addr() + uint64(off), Length: uint32(n), LKey: s.mr.LKey()}}
}

// fill writes a pattern that depends on seed and position.
func fill(b []byte, seed uint64) {
	x := seed*0x9e3779b97f4a7c15 | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
}
