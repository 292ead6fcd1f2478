package pingpong

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// Work request IDs, as the C tools number them: the pending mask of a QP is their OR.
const (
	recvWRID = 1
	sendWRID = 2
)

// udQKey is the Q_Key ud_pingpong's QP and sends use.
const udQKey = 0x11111111

// session holds the verbs objects of one run, created in the C tools' order.
type session struct {
	o        Options
	stdout   io.Writer
	stderr   io.Writer
	sess     *tool.Session // the device, with the common options' capture, logger and counters
	dev      *gorxe.Device
	buf      *gorxe.Buffer
	channel  *gorxe.CompChannel
	pd       *gorxe.PD
	mr       *gorxe.MR
	cq       *gorxe.CQ
	srq      *gorxe.SRQ
	qps      []*gorxe.QP
	ah       *gorxe.AH
	pageSize int

	recvWRs []gorxe.RecvWR // rx_depth identical receives, posted as a batch
	sendWR  []gorxe.SendWR // the one send, reused
}

// selection picks the run's device, in latency mode when the run busy-polls its CQ (no -e, see
// traffic.poll), so that its polls read the network themselves.
func selection(o *Options) devselect.Selection {
	sel := devselect.Selection{Device: o.IBDev}
	if !o.Events {
		sel.BusyPoll = tool.LatencyBusyPoll
	}
	return sel
}

// open opens the device and creates the buffer, PD, MR, CQ, SRQ and QPs, leaving the QPs in INIT.
// On error the caller still calls close.
func (s *session) open() error {
	o := &s.o
	sess, err := o.Common.Open(selection(o), s.stdout, s.stderr)
	if err != nil {
		if errors.Is(err, devselect.ErrDeviceNotFound) {
			return err
		}
		return fmt.Errorf("Couldn't get context for %s: %w", deviceLabel(o), err)
	}
	s.sess, s.dev = sess, sess.Dev
	dev := s.dev
	s.pageSize = os.Getpagesize()
	if o.Kind == UD {
		pa, err := dev.QueryPort(uint8(o.IBPort))
		if err != nil {
			return fmt.Errorf("Unable to query port info for port %d: %w", o.IBPort, err)
		}
		if mtu := pa.ActiveMTU.Bytes(); o.Size > mtu {
			return fmt.Errorf("Requested size larger than port MTU (%d)", mtu)
		}
	}
	bufLen := o.Size
	if o.Kind == UD {
		bufLen += gorxe.GRHSize
	}
	s.buf, err = gorxe.AllocBuffer(max(bufLen, 1), gorxe.BufferOptions{})
	if err != nil {
		return fmt.Errorf("Couldn't allocate work buf: %w", err)
	}
	fillBuffer(s.buf.Bytes(), o.Kind)
	if o.Events { // as the C tools, a polling run has no channel
		if s.channel, err = dev.CreateCompChannel(); err != nil {
			return fmt.Errorf("Couldn't create completion channel: %w", err)
		}
	}
	if s.pd, err = dev.AllocPD(); err != nil {
		return fmt.Errorf("Couldn't allocate PD: %w", err)
	}
	switch {
	case o.timestamps:
		return errors.New("The device isn't completion timestamp capable")
	case o.deviceMemory:
		return errors.New("Device doesn't support dm allocation")
	}
	access := gorxe.AccessLocalWrite
	if o.odp {
		access |= gorxe.AccessOnDemand
	}
	if s.mr, err = s.pd.RegMR(s.buf.Bytes(), access); err != nil {
		return fmt.Errorf("Couldn't register MR: %w", err)
	}
	cqe := o.RxDepth + 1
	if o.Kind == SRQ {
		cqe = o.RxDepth + o.NumQP
	}
	if s.cq, err = dev.CreateCQ(cqe, s.channel); err != nil {
		return fmt.Errorf("Couldn't create CQ: %w", err)
	}
	if err := s.createQPs(); err != nil {
		return err
	}
	s.prepareWRs()
	return nil
}

// createQPs creates the SRQ and QPs and moves the QPs to INIT.
func (s *session) createQPs() error {
	o := &s.o
	init := gorxe.QPInitAttr{SendCQ: s.cq, RecvCQ: s.cq, QPType: gorxe.QPTypeRC,
		Cap: gorxe.QPCap{MaxSendWR: 1, MaxRecvWR: o.RxDepth, MaxSendSGE: 1, MaxRecvSGE: 1}}
	n := 1
	switch o.Kind {
	case UC:
		init.QPType = gorxe.QPTypeUC
	case UD:
		init.QPType = gorxe.QPTypeUD
	case SRQ:
		var err error
		s.srq, err = s.dev.CreateSRQ(s.pd, &gorxe.SRQInitAttr{Attr: gorxe.SRQAttr{MaxWR: o.RxDepth, MaxSGE: 1}})
		if err != nil {
			return fmt.Errorf("Couldn't create SRQ: %w", err)
		}
		init.SRQ = s.srq
		init.Cap = gorxe.QPCap{MaxSendWR: 1, MaxSendSGE: 1}
		n = o.NumQP
	}
	for i := range n {
		q, err := s.dev.CreateQP(s.pd, &init)
		if err != nil {
			return fmt.Errorf("Couldn't create %s: %w", s.qpLabel(i), err)
		}
		s.qps = append(s.qps, q)
	}
	attr := gorxe.QPAttr{State: gorxe.QPStateInit, PKeyIndex: 0, PortNum: uint8(o.IBPort)}
	mask := gorxe.QPAttrState | gorxe.QPAttrPKeyIndex | gorxe.QPAttrPort
	if o.Kind == UD {
		attr.QKey = udQKey
		mask |= gorxe.QPAttrQKey
	} else {
		mask |= gorxe.QPAttrAccessFlags // no remote access: only SENDs
	}
	for i, q := range s.qps {
		if err := q.Modify(&attr, mask); err != nil {
			return fmt.Errorf("Failed to modify %s to INIT: %w", s.qpLabel(i), err)
		}
	}
	return nil
}

// prepareWRs builds the receive and send work requests every post reuses: both cover the whole
// buffer, as the C tools post them (UD sends skip the header room).
func (s *session) prepareWRs() {
	base, size := s.mr.Addr(), uint32(s.o.Size)
	recvLen, sendAddr := size, base
	if s.o.Kind == UD {
		recvLen, sendAddr = size+gorxe.GRHSize, base+gorxe.GRHSize
	}
	s.recvWRs = make([]gorxe.RecvWR, s.o.RxDepth)
	for i := range s.recvWRs {
		s.recvWRs[i] = gorxe.RecvWR{ID: recvWRID, SGList: []gorxe.SGE{{Addr: base, Length: recvLen, LKey: s.mr.LKey()}}}
	}
	s.sendWR = []gorxe.SendWR{{ID: sendWRID, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled,
		SGList: []gorxe.SGE{{Addr: sendAddr, Length: size, LKey: s.mr.LKey()}}}}
}

// postRecv posts n receives and returns how many were accepted.
func (s *session) postRecv(n int) int {
	if n <= 0 {
		return 0
	}
	var err error
	if s.srq != nil {
		err = s.srq.PostRecv(s.recvWRs[:n])
	} else {
		err = s.qps[0].PostRecv(s.recvWRs[:n])
	}
	var pe *gorxe.PostError
	switch {
	case err == nil:
		return n
	case errors.As(err, &pe):
		return pe.Index
	}
	return 0
}

// postSend posts the SEND of QP i.
func (s *session) postSend(i int) error {
	return s.qps[i].PostSend(s.sendWR)
}

// close releases everything in the C tools' order and returns the first failure.
func (s *session) close() error {
	var errs []error
	note := func(what string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("Couldn't %s: %w", what, err))
		}
	}
	for i, q := range s.qps {
		note("destroy "+s.qpLabel(i), q.Destroy())
	}
	if s.srq != nil {
		note("destroy SRQ", s.srq.Destroy())
	}
	if s.cq != nil {
		note("destroy CQ", s.cq.Destroy())
	}
	if s.mr != nil {
		note("deregister MR", s.mr.Dereg())
	}
	if s.ah != nil {
		note("destroy AH", s.ah.Destroy())
	}
	if s.pd != nil {
		note("deallocate PD", s.pd.Dealloc())
	}
	if s.channel != nil {
		note("destroy completion channel", s.channel.Destroy())
	}
	if s.sess != nil {
		note("release context", s.sess.Close())
	}
	if s.buf != nil {
		note("free work buf", s.buf.Free())
	}
	return errors.Join(errs...)
}

// qpLabel names QP i in messages as the C tools do: "QP", or "QP[i]" for srq_pingpong.
func (s *session) qpLabel(i int) string {
	if s.o.Kind == SRQ {
		return fmt.Sprintf("QP[%d]", i)
	}
	return "QP"
}

// deviceLabel names the device the options select, for messages before it exists.
func deviceLabel(o *Options) string {
	switch {
	case o.Common.Bind != "":
		return o.Common.Bind
	case o.IBDev != "":
		return o.IBDev
	}
	return "the default device"
}

// fillBuffer fills the message buffer as the C tools do: 0x7b, except srq_pingpong's zeroes.
func fillBuffer(b []byte, k Kind) {
	v := byte(0x7b)
	if k == SRQ {
		v = 0
	}
	for i := range b {
		b[i] = v
	}
}
