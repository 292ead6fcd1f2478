package cmatose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"

	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// server accepts -c connections, sends its messages on each, collects the replies and
// disconnects.
func server(ctx context.Context, o Options, p func(string, ...any), stdout, notices io.Writer) (err error) {
	sess, err := openDevice(&o, o.BindAddr, stdout, notices)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sess.Close()) }() // after the connections have closed, so their DREQs and DREPs count
	dev := sess.Dev
	listen := o.BindAddr
	if !listen.IsValid() {
		listen = netip.IPv4Unspecified()
	}
	l, err := rdmacm.Listen(ctx, dev, netip.AddrPortFrom(listen, uint16(o.Port)), nil)
	if err != nil {
		return fmt.Errorf("failure trying to listen: %w", err)
	}
	defer l.Close()
	// Printed once the listener is up (the C tool prints it just before), so that a script
	// waiting for the line can start the client at once.
	p("cmatose: starting server")
	var nodes []*node
	defer func() { err = errors.Join(err, free(ctx, nodes)) }()
	for range o.Connections {
		n, err := newNode(dev, &o)
		if err != nil {
			return err
		}
		nodes = append(nodes, n)
		if n.conn, err = l.AcceptWith(ctx, n.options(&o)); err != nil {
			return fmt.Errorf("failure accepting: %w", err)
		}
	}
	if o.Count > 0 {
		p("initiating data transfers")
		for _, n := range nodes {
			if err := n.sends(&o); err != nil {
				return err
			}
		}
		p("completing sends")
		for _, n := range nodes {
			if err := complete(ctx, n.conn.SendCQ(), o.Count); err != nil {
				return err
			}
		}
		p("receiving data transfers")
		for _, n := range nodes {
			if err := complete(ctx, n.conn.RecvCQ(), o.Count); err != nil {
				return err
			}
		}
		p("data transfers complete")
	}
	p("cmatose: disconnecting")
	if err := hangup(ctx, nodes); err != nil {
		return err
	}
	p("disconnected")
	return nil
}

// client opens -c connections, receives the server's messages on each, replies and waits for the
// server to disconnect.
func client(ctx context.Context, o Options, p func(string, ...any), stdout, notices io.Writer) (err error) {
	p("cmatose: starting client")
	src := o.BindAddr
	if !src.IsValid() && o.Common.Bind == "" {
		if src, err = devselect.RouteSource(o.Server); err != nil {
			return err
		}
	}
	sess, err := openDevice(&o, src, stdout, notices)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sess.Close()) }() // after the connections have closed, so their DREQs and DREPs count
	dev := sess.Dev
	p("cmatose: connecting")
	var nodes []*node
	defer func() { err = errors.Join(err, free(ctx, nodes)) }()
	// -c connections, all within --timeout.
	dst, dialFailed := netip.AddrPortFrom(o.Server, uint16(o.Port)), false
	_, err = tool.Within(ctx, o.Timeout, func(ctx context.Context) (struct{}, error) {
		for range o.Connections {
			n, err := newNode(dev, &o)
			if err != nil {
				return struct{}{}, err
			}
			nodes = append(nodes, n)
			opts := n.options(&o)
			opts.Source = netip.AddrPortFrom(src, 0)
			if n.conn, err = rdmacm.Dial(ctx, dev, dst, opts); err != nil {
				dialFailed = true
				return struct{}{}, err
			}
		}
		return struct{}{}, nil
	})
	if dialFailed {
		return fmt.Errorf("cmatose: event: connect to %v: %w", dst, err)
	}
	if err != nil {
		return err
	}
	if o.Count > 0 {
		p("receiving data transfers")
		for _, n := range nodes {
			if err := complete(ctx, n.conn.RecvCQ(), o.Count); err != nil {
				return err
			}
		}
		p("sending replies")
		for _, n := range nodes {
			if err := n.sends(&o); err != nil {
				return err
			}
		}
		p("data transfers complete")
	}
	// The server hangs up once it has the replies.
	for _, n := range nodes {
		if err := waitDisconnect(ctx, n.conn); err != nil {
			return err
		}
	}
	return nil
}

// waitDisconnect waits for the peer's DREQ.
func waitDisconnect(ctx context.Context, c *rdmacm.Conn) error {
	for {
		select {
		case e := <-c.Events():
			if e.Type == rdmacm.EventDisconnected {
				return nil
			}
		case <-c.Done():
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
