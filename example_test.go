package gorxe_test

import (
	"context"
	"fmt"
	"log"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/netio"
)

// exampleNetwork stands in for real UDP sockets so the examples run anywhere; a program normally
// leaves Config.Network nil and binds an address or interface of the host.
var exampleNetwork = netio.NewFabric(netio.FabricConfig{}).Network()

// Register a buffer for local writes and remote RDMA reads and writes (ibv_reg_mr). The rkey and
// address are what a peer needs to access it.
func ExamplePD_RegMR() {
	dev, err := gorxe.Open(gorxe.Config{Addr: netip.MustParseAddr("10.1.0.1"), Network: exampleNetwork})
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	pd, err := dev.AllocPD()
	if err != nil {
		log.Fatal(err)
	}
	buf, err := gorxe.AllocBuffer(1<<20, gorxe.BufferOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Free()
	mr, err := pd.RegMR(buf.Bytes(), gorxe.AccessLocalWrite|gorxe.AccessRemoteWrite|gorxe.AccessRemoteRead)
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Dereg()
	fmt.Println(mr.Length(), mr.LKey() == mr.RKey(), mr.Access())
	// Output: 1048576 true LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ
}

// Create an RC QP and bring it to RTS with the attribute masks ibv_rc_pingpong uses. The peer's
// QP number, PSN and GID come from an out-of-band exchange.
func ExampleQP_Modify() {
	dev, err := gorxe.Open(gorxe.Config{Addr: netip.MustParseAddr("10.1.0.2"), Network: exampleNetwork})
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	pd, _ := dev.AllocPD()
	cq, _ := dev.CreateCQ(128, nil)
	qp, err := dev.CreateQP(pd, &gorxe.QPInitAttr{
		SendCQ: cq, RecvCQ: cq, QPType: gorxe.QPTypeRC,
		Cap: gorxe.QPCap{MaxSendWR: 64, MaxRecvWR: 64, MaxSendSGE: 1, MaxRecvSGE: 1},
	})
	if err != nil {
		log.Fatal(err)
	}
	remoteQPN, remotePSN, localPSN := uint32(0x11), uint32(0x4242), uint32(0x1234)
	remoteGID := gorxe.GIDFromAddr(netip.MustParseAddr("10.1.0.3"))

	steps := []struct {
		attr gorxe.QPAttr
		mask gorxe.QPAttrMask
	}{
		{gorxe.QPAttr{State: gorxe.QPStateInit, PKeyIndex: 0, PortNum: 1, AccessFlags: gorxe.AccessRemoteWrite | gorxe.AccessRemoteRead},
			gorxe.QPAttrState | gorxe.QPAttrPKeyIndex | gorxe.QPAttrPort | gorxe.QPAttrAccessFlags},
		{gorxe.QPAttr{State: gorxe.QPStateRTR, PathMTU: gorxe.MTU1024, DestQPNum: remoteQPN, RQPSN: remotePSN,
			MaxDestRdAtomic: 1, MinRNRTimer: 12,
			AHAttr: gorxe.AHAttr{IsGlobal: true, PortNum: 1, GRH: gorxe.GlobalRoute{DGID: remoteGID, SGIDIndex: 1, HopLimit: 64}}},
			gorxe.QPAttrState | gorxe.QPAttrAV | gorxe.QPAttrPathMTU | gorxe.QPAttrDestQPN | gorxe.QPAttrRQPSN |
				gorxe.QPAttrMaxDestRdAtomic | gorxe.QPAttrMinRNRTimer},
		{gorxe.QPAttr{State: gorxe.QPStateRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7, SQPSN: localPSN, MaxRdAtomic: 1},
			gorxe.QPAttrState | gorxe.QPAttrTimeout | gorxe.QPAttrRetryCnt | gorxe.QPAttrRNRRetry |
				gorxe.QPAttrSQPSN | gorxe.QPAttrMaxQPRdAtomic},
	}
	for _, s := range steps {
		if err := qp.Modify(&s.attr, s.mask); err != nil {
			log.Fatal(err)
		}
		fmt.Println(qp.State())
	}
	// Output:
	// INIT
	// RTR
	// RTS
}

// Connect two RC QPs on two devices, post a receive on one and a send on the other, and wait for
// both completions on a completion channel instead of busy polling.
func ExampleQP_PostSend() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type side struct {
		dev *gorxe.Device
		cq  *gorxe.CQ
		ch  *gorxe.CompChannel
		buf []byte
		mr  *gorxe.MR
		qp  *gorxe.QP
	}
	open := func(addr string) *side {
		s := &side{buf: make([]byte, 4096)}
		var err error
		if s.dev, err = gorxe.Open(gorxe.Config{Addr: netip.MustParseAddr(addr), Network: exampleNetwork}); err != nil {
			log.Fatal(err)
		}
		pd, _ := s.dev.AllocPD()
		s.ch, _ = s.dev.CreateCompChannel()
		s.cq, _ = s.dev.CreateCQ(16, s.ch)
		s.mr, _ = pd.RegMR(s.buf, gorxe.AccessLocalWrite)
		s.qp, err = s.dev.CreateQP(pd, &gorxe.QPInitAttr{SendCQ: s.cq, RecvCQ: s.cq, QPType: gorxe.QPTypeRC,
			Cap: gorxe.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: 64}})
		if err != nil {
			log.Fatal(err)
		}
		return s
	}
	a, b := open("10.1.1.1"), open("10.1.1.2")
	defer a.dev.Close()
	defer b.dev.Close()

	// Exchange QP numbers and GIDs (out of band in a real program) and connect.
	for _, p := range [][2]*side{{a, b}, {b, a}} {
		local, remote := p[0], p[1]
		gid, _ := remote.dev.QueryGID(1)
		attrs := []struct {
			attr gorxe.QPAttr
			mask gorxe.QPAttrMask
		}{
			{gorxe.QPAttr{State: gorxe.QPStateInit, PortNum: 1}, gorxe.QPAttrState | gorxe.QPAttrPKeyIndex | gorxe.QPAttrPort | gorxe.QPAttrAccessFlags},
			{gorxe.QPAttr{State: gorxe.QPStateRTR, PathMTU: gorxe.MTU1024, DestQPNum: remote.qp.QPN(), RQPSN: 0, MaxDestRdAtomic: 1, MinRNRTimer: 12,
				AHAttr: gorxe.AHAttr{IsGlobal: true, PortNum: 1, GRH: gorxe.GlobalRoute{DGID: gid, SGIDIndex: 1, HopLimit: 64}}},
				gorxe.QPAttrState | gorxe.QPAttrAV | gorxe.QPAttrPathMTU | gorxe.QPAttrDestQPN | gorxe.QPAttrRQPSN | gorxe.QPAttrMaxDestRdAtomic | gorxe.QPAttrMinRNRTimer},
			{gorxe.QPAttr{State: gorxe.QPStateRTS, Timeout: 14, RetryCnt: 7, RNRRetry: 7, SQPSN: 0, MaxRdAtomic: 1},
				gorxe.QPAttrState | gorxe.QPAttrTimeout | gorxe.QPAttrRetryCnt | gorxe.QPAttrRNRRetry | gorxe.QPAttrSQPSN | gorxe.QPAttrMaxQPRdAtomic},
		}
		for _, s := range attrs {
			if err := local.qp.Modify(&s.attr, s.mask); err != nil {
				log.Fatal(err)
			}
		}
	}

	msg := "hello over RoCEv2"
	b.qp.PostRecv([]gorxe.RecvWR{{ID: 1, SGList: []gorxe.SGE{{Addr: b.mr.Addr(), Length: 4096, LKey: b.mr.LKey()}}}})
	if err := a.qp.PostSend([]gorxe.SendWR{{ID: 2, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled | gorxe.SendInline,
		InlineData: []byte(msg)}}); err != nil {
		log.Fatal(err)
	}

	// wait returns the next completion of s, sleeping on its completion channel.
	wait := func(s *side) gorxe.WC {
		wc := make([]gorxe.WC, 1)
		for {
			if s.cq.Poll(wc) == 1 {
				return wc[0]
			}
			s.cq.ReqNotify(false)
			if s.cq.Poll(wc) == 1 {
				return wc[0]
			}
			cq, err := s.ch.GetEvent(ctx)
			if err != nil {
				log.Fatal(err)
			}
			cq.AckEvents(1)
		}
	}
	sent, recvd := wait(a), wait(b)
	fmt.Println(sent.WRID, sent.Opcode, sent.Status)
	fmt.Println(recvd.WRID, recvd.Opcode, recvd.Status, recvd.ByteLen)
	fmt.Printf("%s\n", b.buf[:recvd.ByteLen])
	// Output:
	// 2 SEND success
	// 1 RECV success 17
	// hello over RoCEv2
}
