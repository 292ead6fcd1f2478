package mckey

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"syscall"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// Run joins the group on every QP, waits the pause, then sends (-s) or awaits the messages,
// leaves, and prints the C tool's lines, ending with "test complete" and the return status.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	p := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	role := "server"
	if o.Sender {
		role = "client"
	}
	p("mckey: starting %s", role)
	err := run(ctx, o, p, stdout, stderr)
	p("test complete")
	status := 0
	if err != nil {
		status = 1
	}
	p("return status %d", status)
	return err
}

// node is one QP in the group with its message buffer (struct cmatest_node).
type node struct {
	pd  *gorxe.PD
	ch  *gorxe.CompChannel
	cq  *gorxe.CQ
	qp  *gorxe.QP
	mr  *gorxe.MR
	buf []byte
	ah  *gorxe.AH
	mc  *rdmacm.Multicast
}

func run(ctx context.Context, o Options, p func(string, ...any), stdout, stderr io.Writer) (err error) {
	sess, err := openDevice(&o, stdout, stderr)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sess.Close()) }()
	dev := sess.Dev
	p("mckey: joining")
	var nodes []*node
	defer func() {
		for _, n := range nodes {
			err = errors.Join(err, n.free())
		}
	}()
	for range o.Connections {
		n := &node{}
		nodes = append(nodes, n)
		if err := n.init(dev, &o, p); err != nil {
			return err
		}
		if !o.Sender {
			if err := n.postRecvs(&o); err != nil {
				return err
			}
		}
		if n.mc, err = rdmacm.JoinMulticast(ctx, dev, n.qp, o.Group,
			&rdmacm.JoinOptions{PortSpace: o.PortSpace, SendOnly: o.SendOnly, Source: o.BindAddr}); err != nil {
			return fmt.Errorf("failure joining: %w", err)
		}
		p("mckey: joined dgid: %s mlid 0x%x sl %d", netip.AddrFrom16(n.mc.AH.GRH.DGID), n.mc.AH.DLID, n.mc.AH.SL)
		if n.ah, err = n.pd.CreateAH(&n.mc.AH); err != nil {
			return fmt.Errorf("failure creating address handle: %w", err)
		}
	}
	// The C tool's pause for a subnet manager; here it gives receivers time to join.
	if err := sleep(ctx, o.Pause); err != nil {
		return err
	}
	if o.Count > 0 {
		if o.Sender {
			p("initiating data transfers")
			for _, n := range nodes {
				if err := n.postSends(&o); err != nil {
					return err
				}
			}
			// The C tool posts its sends unsignaled and leaves; gorxe waits until they are on
			// the wire, since destroying the QP drops what it has not sent.
			for _, n := range nodes {
				if err := complete(ctx, n.cq, o.Count); err != nil {
					return err
				}
			}
		} else {
			p("receiving data transfers")
			if _, err := tool.Within(ctx, o.Timeout, func(ctx context.Context) (struct{}, error) {
				for _, n := range nodes {
					if err := complete(ctx, n.cq, o.Count); err != nil {
						return struct{}{}, err
					}
				}
				return struct{}{}, nil
			}); err != nil {
				return fmt.Errorf("waiting for the messages: %w", err)
			}
		}
		p("data transfers complete")
	}
	for _, n := range nodes {
		if err := n.mc.Leave(); err != nil {
			p("mckey: failure leaving: %v", err)
			return err
		}
	}
	return nil
}

// init creates the node's PD, CQ, UD QP (in RTS, with the port space's Q_Key as librdmacm gives
// it) and message buffer, after checking the message fits the active MTU.
func (n *node) init(dev *gorxe.Device, o *Options, p func(string, ...any)) error {
	port, err := dev.QueryPort(1)
	if err != nil {
		return err
	}
	if mtu := port.ActiveMTU.Bytes(); o.Count > 0 && o.Size > mtu {
		p("mckey: message_size %d is larger than active mtu %d", o.Size, mtu)
		return fmt.Errorf("message size %d is larger than the active MTU %d", o.Size, mtu)
	}
	if n.pd, err = dev.AllocPD(); err != nil {
		return fmt.Errorf("unable to allocate PD: %w", err)
	}
	depth := max(o.Count, 1)
	if n.ch, err = dev.CreateCompChannel(); err != nil {
		return fmt.Errorf("unable to create CQ: %w", err)
	}
	if n.cq, err = dev.CreateCQ(2*depth, n.ch); err != nil {
		return fmt.Errorf("unable to create CQ: %w", err)
	}
	if o.NoLoopback {
		// IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: rxe accepts no QP creation flags.
		return fmt.Errorf("unable to create QP: %w", syscall.EOPNOTSUPP)
	}
	if n.qp, err = dev.CreateQP(n.pd, &gorxe.QPInitAttr{SendCQ: n.cq, RecvCQ: n.cq, QPType: gorxe.QPTypeUD,
		Cap: gorxe.QPCap{MaxSendWR: depth, MaxRecvWR: depth, MaxSendSGE: 1, MaxRecvSGE: 1}}); err != nil {
		return fmt.Errorf("unable to create QP: %w", err)
	}
	qkey := rdmacm.UDPQKey
	if o.PortSpace == mad.PortSpaceIPoIB {
		qkey = 0
	}
	for _, s := range []struct {
		attr gorxe.QPAttr
		mask gorxe.QPAttrMask
	}{
		{gorxe.QPAttr{State: gorxe.QPStateInit, PortNum: 1, QKey: qkey}, gorxe.QPAttrState | gorxe.QPAttrPKeyIndex | gorxe.QPAttrPort | gorxe.QPAttrQKey},
		{gorxe.QPAttr{State: gorxe.QPStateRTR}, gorxe.QPAttrState},
		{gorxe.QPAttr{State: gorxe.QPStateRTS}, gorxe.QPAttrState | gorxe.QPAttrSQPSN},
	} {
		if err := n.qp.Modify(&s.attr, s.mask); err != nil {
			return fmt.Errorf("unable to create QP: %w", err)
		}
	}
	n.buf = make([]byte, o.Size+gorxe.GRHSize)
	if n.mr, err = n.pd.RegMR(n.buf, gorxe.AccessLocalWrite); err != nil {
		return fmt.Errorf("failed to reg MR: %w", err)
	}
	return nil
}

// postRecvs posts a receive for every message, each with room for the GRH.
func (n *node) postRecvs(o *Options) error {
	for i := range o.Count {
		wr := gorxe.RecvWR{ID: uint64(i), SGList: []gorxe.SGE{{Addr: n.mr.Addr(), Length: uint32(len(n.buf)), LKey: n.mr.LKey()}}}
		if err := n.qp.PostRecv([]gorxe.RecvWR{wr}); err != nil {
			return fmt.Errorf("failed to post receives: %w", err)
		}
	}
	return nil
}

// postSends sends the messages to the group: SEND with immediate, the immediate being the
// sender's QPN, as the C tool does.
func (n *node) postSends(o *Options) error {
	for i := range o.Count {
		wr := gorxe.SendWR{ID: uint64(i), Opcode: gorxe.WRSendWithImm, Flags: gorxe.SendSignaled, ImmData: n.qp.QPN(),
			SGList: []gorxe.SGE{{Addr: n.mr.Addr(), Length: uint32(o.Size), LKey: n.mr.LKey()}},
			UD:     gorxe.UDInfo{AH: n.ah, RemoteQPN: n.mc.QPN, RemoteQKey: n.mc.QKey}}
		if err := n.qp.PostSend([]gorxe.SendWR{wr}); err != nil {
			return fmt.Errorf("failed to post sends: %w", err)
		}
	}
	return nil
}

// complete waits for count completions on cq. Like the C tool it counts them without looking
// at their status.
func complete(ctx context.Context, cq *gorxe.CQ, count int) error {
	wcs := make([]gorxe.WC, 8)
	for done := 0; done < count; {
		k := cq.Poll(wcs)
		done += k
		if k == 0 {
			if err := cq.Wait(ctx); err != nil {
				return fmt.Errorf("waiting for messages (%d of %d): %w", done, count, err)
			}
		}
	}
	return nil
}

// free releases what init created, the group first.
func (n *node) free() error {
	var errs []error
	if n.ah != nil {
		errs = append(errs, n.ah.Destroy())
	}
	if n.qp != nil {
		errs = append(errs, n.qp.Destroy())
	}
	if n.cq != nil {
		errs = append(errs, n.cq.Destroy())
	}
	if n.ch != nil {
		errs = append(errs, n.ch.Destroy())
	}
	if n.mr != nil {
		errs = append(errs, n.mr.Dereg())
	}
	if n.pd != nil {
		errs = append(errs, n.pd.Dealloc())
	}
	return errors.Join(errs...)
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// openDevice binds the device to --bind, else -b, else the default selection.
func openDevice(o *Options, stdout, stderr io.Writer) (*tool.Session, error) {
	bind := ""
	if o.BindAddr.IsValid() {
		bind = o.BindAddr.String()
	}
	return o.Common.Open(devselect.Selection{Bind: bind}, stdout, stderr)
}
