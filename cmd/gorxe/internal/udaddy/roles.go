package udaddy

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

// server accepts -c endpoints, receives the client's messages on each and answers each message
// to the QPN its immediate data names.
func server(ctx context.Context, o Options, p func(string, ...any), stdout, stderr io.Writer) (err error) {
	sess, err := openDevice(&o, o.BindAddr, stdout, stderr)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sess.Close()) }()
	dev := sess.Dev
	if err := checkSize(dev, &o); err != nil {
		return err
	}
	listen := o.BindAddr
	if !listen.IsValid() {
		listen = netip.IPv4Unspecified()
	}
	l, err := rdmacm.ListenUD(ctx, dev, netip.AddrPortFrom(listen, uint16(o.Port)), nil)
	if err != nil {
		return fmt.Errorf("udaddy: failure trying to listen: %w", err)
	}
	defer l.Close()
	// Printed once the listener is up (the C tool prints it just before), so that a script
	// waiting for the line can start the client at once.
	p("udaddy: starting server")
	var nodes []*node
	defer func() {
		for _, n := range nodes {
			err = errors.Join(err, n.free())
		}
	}()
	for range o.Connections {
		n, err := newNode(dev, &o)
		if err != nil {
			return err
		}
		nodes = append(nodes, n)
		if n.conn, err = l.Accept(ctx, n.options(&o)); err != nil {
			return fmt.Errorf("udaddy: failure accepting: %w", err)
		}
	}
	if o.Count == 0 {
		return nil
	}
	p("receiving data transfers")
	for _, n := range nodes {
		wc, err := complete(ctx, n.conn.RecvCQ(), o.Count)
		if err != nil {
			return err
		}
		// The C tool makes its reply AH from the first message's GRH; the SIDR_REQ came from the
		// same GID, so the endpoint's AH is that one.
		n.ah, n.remoteQPN, n.remoteQKey = n.conn.AH(), wc.ImmData, n.conn.RemoteQKey()
		if wc.WCFlags&gorxe.WCFlagWithImm == 0 {
			n.remoteQPN = wc.SrcQP
		}
	}
	p("sending replies")
	for _, n := range nodes {
		if err := n.sends(&o, gorxe.SendSignaled); err != nil {
			return err
		}
	}
	for _, n := range nodes {
		if _, err := complete(ctx, n.conn.SendCQ(), o.Count); err != nil {
			return err
		}
	}
	p("data transfers complete")
	return nil
}

// client resolves -c endpoints at the server, sends its messages on each and receives the
// replies.
func client(ctx context.Context, o Options, p func(string, ...any), stdout, stderr io.Writer) (err error) {
	p("udaddy: starting client")
	src := o.BindAddr
	if !src.IsValid() && o.Common.Bind == "" {
		if src, err = devselect.RouteSource(o.Server); err != nil {
			return err
		}
	}
	sess, err := openDevice(&o, src, stdout, stderr)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sess.Close()) }()
	dev := sess.Dev
	p("udaddy: connecting")
	if err := checkSize(dev, &o); err != nil {
		return err
	}
	var nodes []*node
	defer func() {
		for _, n := range nodes {
			err = errors.Join(err, n.free())
		}
	}()
	dst := netip.AddrPortFrom(o.Server, uint16(o.Port))
	// -c endpoints, all resolved within --timeout.
	unreachable := false
	_, err = tool.Within(ctx, o.Timeout, func(ctx context.Context) (struct{}, error) {
		for range o.Connections {
			n, err := newNode(dev, &o)
			if err != nil {
				return struct{}{}, err
			}
			nodes = append(nodes, n)
			opts := n.options(&o)
			opts.Source = netip.AddrPortFrom(src, 0)
			if n.conn, err = rdmacm.DialUD(ctx, dev, dst, opts); err != nil {
				unreachable = true
				return struct{}{}, err
			}
			n.ah, n.remoteQPN, n.remoteQKey = n.conn.AH(), n.conn.RemoteQPN(), n.conn.RemoteQKey()
		}
		return struct{}{}, nil
	})
	if err != nil {
		if !unreachable {
			return err
		}
		p("udaddy: event: RDMA_CM_EVENT_UNREACHABLE, error: %d", status(err))
		return fmt.Errorf("resolving %v: %w", dst, err)
	}
	if o.Count == 0 {
		return nil
	}
	p("initiating data transfers")
	for _, n := range nodes {
		if err := n.sends(&o, 0); err != nil {
			return err
		}
	}
	p("receiving data transfers")
	for _, n := range nodes {
		if _, err := complete(ctx, n.conn.RecvCQ(), o.Count); err != nil {
			return err
		}
	}
	p("data transfers complete")
	return nil
}
