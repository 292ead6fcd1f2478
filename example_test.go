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
var exampleFabric = netio.NewFabric(netio.FabricConfig{})

func exampleNetwork(addrs []netip.Addr, port uint16) (netio.Conn, error) {
	return exampleFabric.NewEndpoint(port, addrs...)
}

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

// Post a receive, post a send, and poll their completions. qp is a connected RC QP whose buffer
// region is mr; a completion channel avoids busy polling.
func ExampleQP_PostSend() {
	var (
		qp *gorxe.QP
		mr *gorxe.MR
		cq *gorxe.CQ
		ch *gorxe.CompChannel
	)
	if qp == nil {
		return // set up as in ExampleQP_Modify, with cq created on ch
	}
	sge := []gorxe.SGE{{Addr: mr.Addr(), Length: 4096, LKey: mr.LKey()}}
	if err := qp.PostRecv([]gorxe.RecvWR{{ID: 1, SGList: sge}}); err != nil {
		log.Fatal(err)
	}
	if err := qp.PostSend([]gorxe.SendWR{{ID: 2, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled, SGList: sge}}); err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	wcs := make([]gorxe.WC, 16)
	for done := 0; done < 2; {
		if err := cq.ReqNotify(false); err != nil {
			log.Fatal(err)
		}
		n := cq.Poll(wcs)
		for _, wc := range wcs[:n] {
			if wc.Status != gorxe.WCSuccess {
				log.Fatalf("wr %d: %v", wc.WRID, wc.Status)
			}
			fmt.Println(wc.WRID, wc.Opcode, wc.ByteLen)
		}
		done += n
		if n == 0 {
			ev, err := ch.GetEvent(ctx)
			if err != nil {
				log.Fatal(err)
			}
			ev.AckEvents(1)
		}
	}
}
