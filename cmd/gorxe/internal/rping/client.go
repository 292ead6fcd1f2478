package rping

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/internal/devselect"
)

// errMismatch: with -V, the data that came back differs from what was sent.
var errMismatch = errors.New("data mismatch!")

// client connects and pings -C times (forever with 0), then disconnects.
func (t *tool) client(ctx context.Context) (err error) {
	src := t.o.Source
	if !src.IsValid() && t.o.Bind == "" {
		if src, err = devselect.RouteSource(t.o.Addr); err != nil {
			return err
		}
	}
	bind := ""
	if src.IsValid() {
		bind = src.String()
	}
	dev, err := t.openDevice(bind)
	if err != nil {
		return err
	}
	defer dev.Close()
	obs, err := t.o.Observe.StartCM(t.stderr, dev)
	if err != nil {
		return err
	}
	defer obs.End(t.stdout) // after the connection has closed, so its DREQ and DREP count
	b, err := newBuffers(dev, t.o.Size, true)
	if err != nil {
		return err
	}
	opts := connOptions(b)
	opts.Source = netip.AddrPortFrom(src, 0)
	dctx, cancel := ctx, context.CancelFunc(func() {})
	if t.o.Timeout > 0 {
		dctx, cancel = context.WithTimeout(ctx, t.o.Timeout)
	}
	c, err := rdmacm.Dial(dctx, dev, netip.AddrPortFrom(t.o.Addr, uint16(t.o.Port)), opts)
	cancel()
	if err != nil {
		return errors.Join(fmt.Errorf("connect to %v: %w", netip.AddrPortFrom(t.o.Addr, uint16(t.o.Port)), err), b.free())
	}
	t.debugf("connected to %v from %v", c.RemoteAddr(), c.LocalAddr())
	defer func() { err = errors.Join(err, closeConn(ctx, c), b.free()) }()
	err = t.pings(ctx, c, b)
	if err == nil {
		err = c.Disconnect(ctx)
	}
	return err
}

// pings runs the client's half of the loop.
func (t *tool) pings(ctx context.Context, c *rdmacm.Conn, b *buffers) error {
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
