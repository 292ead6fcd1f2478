package rdmacm

import (
	"context"
	"net/netip"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// QP1's queues: enough receive buffers to absorb a burst of REQs and their retransmissions, and
// send buffers for a burst of replies. A MAD that finds no buffer is lost like one dropped on the
// network, and the manager's retransmission covers it.
const (
	qp1RecvSlots = 64
	qp1SendSlots = 64
	recvSize     = gorxe.GRHSize + mad.Size
	// cmClass is the management class of CM MADs (the byte after the base version).
	cmClass = 0x07
	// sendTag marks send work request IDs, so one CQ serves both queues.
	sendTag = 1 << 32
)

// qp1 is a device's GSI queue pair with its registered buffers.
type qp1 struct {
	dev  *gorxe.Device
	pd   *gorxe.PD
	ch   *gorxe.CompChannel
	cq   *gorxe.CQ
	qp   *gorxe.QP
	buf  []byte
	mr   *gorxe.MR
	free chan int // send slots whose previous MAD has completed
	ahs  map[ahKey]*gorxe.AH
}

// ahKey names an address handle: the source GID index and the destination.
type ahKey struct {
	sgid int
	dgid [16]byte
}

// rxMAD is one received CM MAD with the addresses it travelled between.
type rxMAD struct {
	from  cm.Addr
	local [16]byte // the GID it was sent to
	mad   []byte
}

// openQP1 creates the GSI QP (QP number 1, Q_Key 0x80010000), moves it to RTS and posts its receive
// buffers. The device allows one GSI QP, so a second agent on the same device fails here.
func openQP1(dev *gorxe.Device) (_ *qp1, err error) {
	// q is not the named result: a failing step returns nil, and the deferred cleanup must still
	// see what was created.
	q := &qp1{dev: dev, free: make(chan int, qp1SendSlots), ahs: make(map[ahKey]*gorxe.AH)}
	defer func() {
		if err != nil {
			q.close()
		}
	}()
	if q.pd, err = dev.AllocPD(); err != nil {
		return nil, err
	}
	if q.ch, err = dev.CreateCompChannel(); err != nil {
		return nil, err
	}
	if q.cq, err = dev.CreateCQ(qp1RecvSlots+qp1SendSlots, q.ch); err != nil {
		return nil, err
	}
	q.qp, err = dev.CreateQP(q.pd, &gorxe.QPInitAttr{SendCQ: q.cq, RecvCQ: q.cq, QPType: gorxe.QPTypeGSI,
		Cap: gorxe.QPCap{MaxSendWR: qp1SendSlots, MaxRecvWR: qp1RecvSlots, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		return nil, err
	}
	steps := []struct {
		attr gorxe.QPAttr
		mask gorxe.QPAttrMask
	}{
		{gorxe.QPAttr{State: gorxe.QPStateInit, QKey: gorxe.GSIQKey}, gorxe.QPAttrState | gorxe.QPAttrPKeyIndex | gorxe.QPAttrQKey},
		{gorxe.QPAttr{State: gorxe.QPStateRTR}, gorxe.QPAttrState},
		{gorxe.QPAttr{State: gorxe.QPStateRTS}, gorxe.QPAttrState | gorxe.QPAttrSQPSN},
	}
	for _, s := range steps {
		if err = q.qp.Modify(&s.attr, s.mask); err != nil {
			return nil, err
		}
	}
	q.buf = make([]byte, qp1RecvSlots*recvSize+qp1SendSlots*mad.Size)
	if q.mr, err = q.pd.RegMR(q.buf, gorxe.AccessLocalWrite); err != nil {
		return nil, err
	}
	for i := range qp1RecvSlots {
		if err = q.postRecv(i); err != nil {
			return nil, err
		}
	}
	for i := range qp1SendSlots {
		q.free <- i
	}
	return q, nil
}

func (q *qp1) postRecv(slot int) error {
	off := slot * recvSize
	return q.qp.PostRecv([]gorxe.RecvWR{{ID: uint64(slot),
		SGList: []gorxe.SGE{{Addr: q.mr.Addr() + uint64(off), Length: recvSize, LKey: q.mr.LKey()}}}})
}

// send posts one MAD from QP1 to a peer's QP1 through the address handle for (sgid, to). It
// reports false when the MAD could not be sent (no free buffer, no address handle); the caller
// counts it as lost.
func (q *qp1) send(sgid int, to cm.Addr, m []byte) bool {
	if sgid < 0 {
		return false
	}
	var slot int
	select {
	case slot = <-q.free:
	default:
		return false
	}
	ah, err := q.ah(sgid, to.GID)
	if err != nil {
		q.free <- slot
		return false
	}
	off := qp1RecvSlots*recvSize + slot*mad.Size
	copy(q.buf[off:off+mad.Size], m)
	err = q.qp.PostSend([]gorxe.SendWR{{ID: sendTag | uint64(slot), Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled,
		SGList: []gorxe.SGE{{Addr: q.mr.Addr() + uint64(off), Length: mad.Size, LKey: q.mr.LKey()}},
		UD:     gorxe.UDInfo{AH: ah, RemoteQPN: to.QPN, RemoteQKey: gorxe.GSIQKey}}})
	if err != nil {
		q.free <- slot
		return false
	}
	return true
}

// ah returns the cached address handle from local GID index sgid to dgid.
func (q *qp1) ah(sgid int, dgid [16]byte) (*gorxe.AH, error) {
	k := ahKey{sgid, dgid}
	if ah := q.ahs[k]; ah != nil {
		return ah, nil
	}
	ah, err := q.pd.CreateAH(&gorxe.AHAttr{IsGlobal: true, PortNum: 1,
		GRH: gorxe.GlobalRoute{DGID: dgid, SGIDIndex: uint8(sgid), HopLimit: cm.DefaultHopLimit}})
	if err != nil {
		return nil, err
	}
	q.ahs[k] = ah
	return ah, nil
}

// receive waits for QP1's completions until ctx ends: it recycles send buffers and hands every CM
// MAD that arrived to deliver, re-posting its receive buffer first.
func (q *qp1) receive(ctx context.Context, deliver func(rxMAD) bool) {
	wcs := make([]gorxe.WC, 16)
	for {
		if q.cq.Wait(ctx) != nil {
			return
		}
		n := q.cq.Poll(wcs)
		for _, wc := range wcs[:n] {
			if wc.WRID&sendTag != 0 {
				q.free <- int(wc.WRID &^ sendTag)
				continue
			}
			if wc.Status != gorxe.WCSuccess {
				continue // flushed: the QP is going away
			}
			slot := int(wc.WRID)
			b := q.buf[slot*recvSize : slot*recvSize+int(min(wc.ByteLen, recvSize))]
			m, ok := parseRecv(b, wc.SrcQP)
			if q.postRecv(slot) != nil {
				return
			}
			if ok && !deliver(m) {
				return
			}
		}
	}
}

// parseRecv copies a received MAD out of its buffer: the network header (rxe's layout: for IPv4 20
// zero bytes then the IPv4 header, for IPv6 the IPv6 header) gives the addresses. Other management
// classes are not the CM's and are dropped.
func parseRecv(b []byte, srcQP uint32) (rxMAD, bool) {
	if len(b) < gorxe.GRHSize+mad.Size || b[gorxe.GRHSize+1] != cmClass {
		return rxMAD{}, false
	}
	var src, dst netip.Addr
	if b[0]>>4 == 6 {
		src = netip.AddrFrom16([16]byte(b[8:24]))
		dst = netip.AddrFrom16([16]byte(b[24:40]))
	} else {
		src = netip.AddrFrom4([4]byte(b[32:36]))
		dst = netip.AddrFrom4([4]byte(b[36:40]))
	}
	return rxMAD{
		from:  cm.Addr{GID: src.As16(), QPN: srcQP},
		local: dst.As16(),
		mad:   append([]byte(nil), b[gorxe.GRHSize:gorxe.GRHSize+mad.Size]...),
	}, true
}

// close destroys what openQP1 created, in reverse order.
func (q *qp1) close() {
	for _, ah := range q.ahs {
		ah.Destroy()
	}
	if q.qp != nil {
		q.qp.Destroy()
	}
	if q.mr != nil {
		q.mr.Dereg()
	}
	if q.cq != nil {
		q.cq.Destroy()
	}
	if q.ch != nil {
		q.ch.Destroy()
	}
	if q.pd != nil {
		q.pd.Dealloc()
	}
}
