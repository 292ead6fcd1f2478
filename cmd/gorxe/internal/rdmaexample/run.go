package rdmaexample

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sync"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// Run runs the program and prints its lines: "<name>: start" and "<name>: end <status>". The
// server prints its first line once it listens (the C program prints it first thing), so that a
// script waiting for the line can start the client at once.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	started := sync.OnceFunc(func() { fmt.Fprintf(stdout, "%v: start\n", o.Role) })
	var err error
	if o.Role == Server {
		err = server(ctx, o, started, stdout, stderr)
	} else {
		started()
		err = client(ctx, o, stdout, stderr)
	}
	started()
	status := 0
	if err != nil {
		status = -1
	}
	fmt.Fprintf(stdout, "%v: end %d\n", o.Role, status)
	return err
}

// endpoint is the connection's memory: a receive buffer for the peer's message (the message we
// send goes inline, as the C programs send it when the QP allows 16 bytes of inline data).
type endpoint struct {
	pd   *gorxe.PD
	recv []byte
	mr   *gorxe.MR
	conn *rdmacm.Conn
}

func newEndpoint(dev *gorxe.Device) (*endpoint, error) {
	e := &endpoint{recv: make([]byte, MessageSize)}
	var err error
	if e.pd, err = dev.AllocPD(); err != nil {
		return nil, err
	}
	if e.mr, err = e.pd.RegMR(e.recv, gorxe.AccessLocalWrite); err != nil {
		return nil, errors.Join(err, e.pd.Dealloc())
	}
	return e, nil
}

// options are rdma_create_ep's QP (one work request and SGE each way, 16 bytes inline) with the
// receive posted before the connection exists, and rdma_connect's defaults.
func (e *endpoint) options() *rdmacm.Options {
	return &rdmacm.Options{PD: e.pd,
		Cap:  gorxe.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: MessageSize},
		Recv: []gorxe.RecvWR{{ID: 1, SGList: []gorxe.SGE{{Addr: e.mr.Addr(), Length: MessageSize, LKey: e.mr.LKey()}}}}}
}

// send posts the message, inline and signaled (the C programs set sq_sig_all), and waits for its
// completion. A completion flushed by the peer's disconnection counts as sent, as it does for the
// C programs, which look at no completion's status: the peer hangs up once it has received the
// message, and its DREQ may overtake the ACK that would have completed the send.
func (e *endpoint) send(ctx context.Context) error {
	if err := e.conn.QP().PostSend([]gorxe.SendWR{{ID: 2, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled | gorxe.SendInline,
		InlineData: make([]byte, MessageSize)}}); err != nil {
		return fmt.Errorf("rdma_post_send: %w", err)
	}
	return completion(ctx, e.conn.SendCQ(), "rdma_get_send_comp", gorxe.WCWRFlushErr)
}

// completion waits for one completion on cq and checks that it succeeded, or has the status
// tolerated.
func completion(ctx context.Context, cq *gorxe.CQ, what string, tolerated ...gorxe.WCStatus) error {
	wcs := make([]gorxe.WC, 1)
	for cq.Poll(wcs) == 0 {
		if err := cq.Wait(ctx); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if st := wcs[0].Status; st != gorxe.WCSuccess && !slices.Contains(tolerated, st) {
		return fmt.Errorf("%s: %v", what, st)
	}
	return nil
}

// close disconnects (rdma_disconnect), waiting for the peer's answer no longer than tool.Linger,
// and frees the memory.
func (e *endpoint) close(ctx context.Context) error {
	return errors.Join(tool.Hangup(ctx, e.conn), e.mr.Dereg(), e.pd.Dealloc())
}

// server takes one connection on -s (every address of the device by default), waits for the
// client's message and answers it.
func server(ctx context.Context, o Options, listening func(), stdout, stderr io.Writer) (err error) {
	bind := ""
	if !o.Server.IsUnspecified() {
		bind = o.Server.String()
	}
	sess, err := o.Common.OpenCM(devselect.Selection{Bind: bind}, stdout, stderr)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sess.Close()) }()
	dev := sess.Dev
	l, err := rdmacm.Listen(ctx, dev, netip.AddrPortFrom(o.Server, uint16(o.Port)), nil)
	if err != nil {
		return fmt.Errorf("rdma_listen: %w", err)
	}
	defer l.Close()
	listening()
	e, err := newEndpoint(dev)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, e.close(ctx)) }()
	if e.conn, err = l.AcceptWith(ctx, e.options()); err != nil {
		return fmt.Errorf("rdma_accept: %w", err)
	}
	if err := completion(ctx, e.conn.RecvCQ(), "rdma_get_recv_comp"); err != nil {
		return err
	}
	return e.send(ctx)
}

// client connects to the server, sends its message and waits for the answer.
func client(ctx context.Context, o Options, stdout, stderr io.Writer) (err error) {
	bind := ""
	src := netip.Addr{}
	if o.Common.Bind == "" {
		if src, err = devselect.RouteSource(o.Server); err != nil {
			return err
		}
		bind = src.String()
	}
	sess, err := o.Common.OpenCM(devselect.Selection{Bind: bind}, stdout, stderr)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sess.Close()) }()
	dev := sess.Dev
	e, err := newEndpoint(dev)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, e.close(ctx)) }()
	opts := e.options()
	opts.Source = netip.AddrPortFrom(src, 0)
	if e.conn, err = tool.Within(ctx, o.Timeout, func(ctx context.Context) (*rdmacm.Conn, error) {
		return rdmacm.Dial(ctx, dev, netip.AddrPortFrom(o.Server, uint16(o.Port)), opts)
	}); err != nil {
		return fmt.Errorf("rdma_connect: %w", err)
	}
	if err := e.send(ctx); err != nil {
		return err
	}
	return completion(ctx, e.conn.RecvCQ(), "rdma_get_recv_comp")
}
