package udaddy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// etimedout is -ETIMEDOUT, the status of RDMA-CM's UNREACHABLE event for a SIDR_REQ nobody
// answered.
const etimedout = -110

// Run runs the server (no -s) or the client and prints the C tool's progress lines, ending with
// "test complete" and the return status.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	p := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	var err error
	if o.Server.IsValid() {
		err = client(ctx, o, p, stdout, stderr)
	} else {
		err = server(ctx, o, p, stdout, stderr)
	}
	p("test complete")
	p("return status %d", status(err))
	return err
}

// status is the C tool's return status for err: the UNREACHABLE event's status for a refused or
// unanswered SIDR_REQ (the SIDR_REP's status, or -ETIMEDOUT), else 1.
func status(err error) int {
	var se *cm.SIDRError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &se):
		return int(se.Status)
	case errors.Is(err, cm.ErrTimeout):
		return etimedout
	}
	return 1
}

// node is one UD endpoint with its message buffer (room for the GRH first, as the C tool's).
type node struct {
	pd   *gorxe.PD
	buf  []byte
	mr   *gorxe.MR
	conn *rdmacm.UDConn
	// The destination of the node's sends: the SIDR_REP's on the client, the first message's
	// source on the server.
	ah         *gorxe.AH
	remoteQPN  uint32
	remoteQKey uint32
}

func newNode(dev *gorxe.Device, o *Options) (*node, error) {
	n := &node{buf: make([]byte, o.Size+gorxe.GRHSize)}
	var err error
	if n.pd, err = dev.AllocPD(); err != nil {
		return nil, err
	}
	if n.mr, err = n.pd.RegMR(n.buf, gorxe.AccessLocalWrite); err != nil {
		return nil, errors.Join(err, n.pd.Dealloc())
	}
	return n, nil
}

// options are udaddy's endpoint: one queue entry per message (one CQ entry each way) and a
// receive for every message posted before the endpoint is resolved or accepted.
func (n *node) options(o *Options) *rdmacm.UDOptions {
	depth := max(o.Count, 1)
	recv := make([]gorxe.RecvWR, o.Count)
	for i := range recv {
		recv[i] = gorxe.RecvWR{ID: uint64(i), SGList: []gorxe.SGE{{Addr: n.mr.Addr(), Length: uint32(o.Size + gorxe.GRHSize), LKey: n.mr.LKey()}}}
	}
	return &rdmacm.UDOptions{TrafficClass: o.TrafficClass, Options: rdmacm.Options{PD: n.pd, Recv: recv, CQE: depth * 2,
		Cap: gorxe.QPCap{MaxSendWR: depth, MaxRecvWR: depth, MaxSendSGE: 1, MaxRecvSGE: 1}}}
}

// sends posts the messages, SEND with immediate data carrying our QPN.
func (n *node) sends(o *Options, flags gorxe.SendFlags) error {
	for i := range o.Count {
		err := n.conn.QP().PostSend([]gorxe.SendWR{{ID: uint64(i), Opcode: gorxe.WRSendWithImm, Flags: flags,
			ImmData: n.conn.QP().QPN(), UD: gorxe.UDInfo{AH: n.ah, RemoteQPN: n.remoteQPN, RemoteQKey: n.remoteQKey},
			SGList: []gorxe.SGE{{Addr: n.mr.Addr(), Length: uint32(o.Size), LKey: n.mr.LKey()}}}})
		if err != nil {
			return fmt.Errorf("failed to post sends: %w", err)
		}
	}
	return nil
}

// free releases the endpoint and the buffer.
func (n *node) free() error {
	var errs []error
	if n.conn != nil {
		errs = append(errs, n.conn.Close())
	}
	return errors.Join(append(errs, n.mr.Dereg(), n.pd.Dealloc())...)
}

// checkSize refuses messages that do not fit one packet, as the C tool does.
func checkSize(dev *gorxe.Device, o *Options) error {
	attr, err := dev.QueryPort(1)
	if err != nil {
		return err
	}
	if mtu := attr.ActiveMTU.Bytes(); o.Count > 0 && o.Size > mtu {
		return fmt.Errorf("udaddy: message_size %d is larger than active mtu %d", o.Size, mtu)
	}
	return nil
}

// complete waits for count successful completions on cq and returns the first.
func complete(ctx context.Context, cq *gorxe.CQ, count int) (gorxe.WC, error) {
	var first gorxe.WC
	wcs := make([]gorxe.WC, 8)
	for done := 0; done < count; {
		k := cq.Poll(wcs)
		for _, wc := range wcs[:k] {
			if wc.Status != gorxe.WCSuccess {
				return first, fmt.Errorf("completion failed: %v", wc.Status)
			}
		}
		if k > 0 && done == 0 {
			first = wcs[0]
		}
		done += k
		if k == 0 {
			if err := cq.Wait(ctx); err != nil {
				return first, err
			}
		}
	}
	return first, nil
}

// openDevice binds the device to --bind, else addr, else the default selection.
func openDevice(o *Options, addr netip.Addr, stdout, stderr io.Writer) (*tool.Session, error) {
	bind := ""
	if addr.IsValid() && !addr.IsUnspecified() {
		bind = addr.String()
	}
	return o.Common.OpenCM(devselect.Selection{Bind: bind}, stdout, stderr)
}
