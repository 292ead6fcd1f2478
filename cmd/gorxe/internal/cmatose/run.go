package cmatose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// Run runs the server (no -s) or the client and prints the C tool's progress lines, ending with
// "test complete" and the return status; --counters prints the counters before them, and
// --metrics says where it serves on stderr.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	p := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	var err error
	if o.Server.IsValid() {
		err = client(ctx, o, p, stdout, stderr)
	} else {
		err = server(ctx, o, p, stdout, stderr)
	}
	p("test complete")
	status := 0
	if err != nil {
		status = 1
	}
	p("return status %d", status)
	return err
}

// node is one connection with its message buffer.
type node struct {
	pd   *gorxe.PD
	buf  []byte
	mr   *gorxe.MR
	conn *rdmacm.Conn
}

// newNode registers a message buffer on a fresh PD.
func newNode(dev *gorxe.Device, o *Options) (*node, error) {
	n := &node{buf: make([]byte, max(o.Size, 1))}
	var err error
	if n.pd, err = dev.AllocPD(); err != nil {
		return nil, err
	}
	if n.mr, err = n.pd.RegMR(n.buf, gorxe.AccessLocalWrite); err != nil {
		return nil, errors.Join(err, n.pd.Dealloc())
	}
	return n, nil
}

// options are ucmatose's connection: one queue entry per message, every send signaled, the
// receives for all messages posted before connecting, responder resources and initiator depth
// 1, 5 retries and no RNR retry (a receive is always waiting).
func (n *node) options(o *Options) *rdmacm.Options {
	depth := max(o.Count, 1)
	recv := make([]gorxe.RecvWR, o.Count)
	for i := range recv {
		recv[i] = gorxe.RecvWR{ID: uint64(i), SGList: n.sge(o)}
	}
	ro := &rdmacm.Options{PD: n.pd, Recv: recv, RetryCount: 5, ZeroRNRRetryCount: true, CQE: depth, AckTimeout: o.AckTimeout,
		Cap: gorxe.QPCap{MaxSendWR: depth, MaxRecvWR: depth, MaxSendSGE: 1, MaxRecvSGE: 1}}
	if o.TOS >= 0 {
		ro.TrafficClass = uint8(o.TOS)
	}
	return ro
}

func (n *node) sge(o *Options) []gorxe.SGE {
	return []gorxe.SGE{{Addr: n.mr.Addr(), Length: uint32(o.Size), LKey: n.mr.LKey()}}
}

// sends posts the messages.
func (n *node) sends(o *Options) error {
	for i := range o.Count {
		err := n.conn.QP().PostSend([]gorxe.SendWR{{ID: uint64(i), Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled, SGList: n.sge(o)}})
		if err != nil {
			return fmt.Errorf("failed to post sends: %w", err)
		}
	}
	return nil
}

// complete waits for count successful completions on cq.
func complete(ctx context.Context, cq *gorxe.CQ, count int) error {
	wcs := make([]gorxe.WC, 8)
	for done := 0; done < count; {
		k := cq.Poll(wcs)
		for _, wc := range wcs[:k] {
			if wc.Status != gorxe.WCSuccess {
				return fmt.Errorf("completion failed: %v", wc.Status)
			}
		}
		done += k
		if k == 0 {
			if err := cq.Wait(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// hangup disconnects and closes the nodes' connections, waiting for the peers' answers no longer
// than tool.Linger.
func hangup(ctx context.Context, nodes []*node) error {
	conns := make([]*rdmacm.Conn, len(nodes))
	for i, n := range nodes {
		conns[i], n.conn = n.conn, nil
	}
	return tool.Hangup(ctx, conns...)
}

// free hangs up the connections still open and releases the nodes' buffers.
func free(ctx context.Context, nodes []*node) error {
	errs := []error{hangup(ctx, nodes)}
	for _, n := range nodes {
		errs = append(errs, n.mr.Dereg(), n.pd.Dealloc())
	}
	return errors.Join(errs...)
}

// openDevice binds the device to --bind, else addr, else the default selection.
func openDevice(o *Options, addr netip.Addr, stdout, stderr io.Writer) (*tool.Session, error) {
	bind := ""
	if addr.IsValid() && !addr.IsUnspecified() {
		bind = addr.String()
	}
	return o.Common.OpenCM(devselect.Selection{Bind: bind}, stdout, stderr)
}
