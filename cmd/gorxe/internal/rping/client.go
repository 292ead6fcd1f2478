package rping

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// errMismatch: with -V, the data that came back differs from what was sent.
var errMismatch = errors.New("data mismatch!")

// client connects and pings -C times (forever with 0), then disconnects.
func (t *pinger) client(ctx context.Context) (err error) {
	src := t.o.Source
	if !src.IsValid() && t.o.Common.Bind == "" {
		if src, err = devselect.RouteSource(t.o.Addr); err != nil {
			return err
		}
	}
	bind := ""
	if src.IsValid() {
		bind = src.String()
	}
	sess, err := t.openDevice(bind)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sess.Close()) }() // after the connection has closed, so its DREQ and DREP count
	b, err := newBuffers(sess.Dev, t.o.Size, true)
	if err != nil {
		return err
	}
	opts := connOptions(b)
	opts.Source = netip.AddrPortFrom(src, 0)
	if t.o.TOS >= 0 {
		opts.TrafficClass = uint8(t.o.TOS)
	}
	c, err := tool.Within(ctx, t.o.Timeout, func(ctx context.Context) (*rdmacm.Conn, error) {
		return rdmacm.Dial(ctx, sess.Dev, netip.AddrPortFrom(t.o.Addr, uint16(t.o.Port)), opts)
	})
	if err != nil {
		return errors.Join(fmt.Errorf("connect to %v: %w", netip.AddrPortFrom(t.o.Addr, uint16(t.o.Port)), err), b.free())
	}
	t.debugf("connected to %v from %v", c.RemoteAddr(), c.LocalAddr())
	defer func() { err = errors.Join(err, tool.Hangup(ctx, c), b.free()) }()
	return t.pings(ctx, c, b) // the deferred hangup disconnects, as rping's rdma_disconnect
}

// pings runs the client's half of the loop.
func (t *pinger) pings(ctx context.Context, c *rdmacm.Conn, b *buffers) error {
	q := newQueues(c)
	start := byte('A')
	for ping := 0; t.o.Count == 0 || ping < t.o.Count; ping++ {
		start = fillPing(b.start, ping, start)
		b.advertise(b.startMR, len(b.start))
		t.debugf("advertising source addr %#x rkey %#x len %d", b.startMR.Addr(), b.startMR.RKey(), len(b.start))
		if err := q.post(b.sendWR()); err != nil {
			return err
		}
		// The go-ahead after the server's READ.
		if err := q.recv(ctx); err != nil {
			return t.ended(err, "client")
		}
		if err := q.postRecv(b.recvWR()); err != nil {
			return err
		}
		b.advertise(b.rdmaMR, len(b.rdma))
		if err := q.post(b.sendWR()); err != nil {
			return err
		}
		// The go-ahead after the server's WRITE.
		if err := q.recv(ctx); err != nil {
			return t.ended(err, "client")
		}
		if err := q.postRecv(b.recvWR()); err != nil {
			return err
		}
		if t.o.Validate && !bytes.Equal(b.start, b.rdma) {
			return errMismatch
		}
		if t.o.Verbose {
			t.printf("ping data: %s", cString(b.rdma))
		}
	}
	return nil
}
