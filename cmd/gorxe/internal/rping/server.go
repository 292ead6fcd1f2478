package rping

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// server listens and serves one connection, or every connection with -P.
func (t *pinger) server(ctx context.Context) (err error) {
	listen := t.o.Addr
	bind := ""
	if listen.IsValid() && !listen.IsUnspecified() {
		bind = listen.String()
	}
	sess, err := t.openDevice(bind)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, sess.Close()) }() // after the connection has closed, so its DREQ and DREP count
	dev := sess.Dev
	if !listen.IsValid() {
		listen = netip.IPv4Unspecified()
	}
	l, err := rdmacm.Listen(ctx, dev, netip.AddrPortFrom(listen, uint16(t.o.Port)), nil)
	if err != nil {
		return fmt.Errorf("rdma_listen: %w", err)
	}
	defer l.Close()
	t.debugf("listening on %v", netip.AddrPortFrom(listen, uint16(t.o.Port)))
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		b, err := newBuffers(dev, t.o.Size, false)
		if err != nil {
			return err
		}
		c, err := l.AcceptWith(ctx, connOptions(b))
		if err != nil {
			return errors.Join(fmt.Errorf("accept: %w", err), b.free())
		}
		t.debugf("accepted connection from %v", c.RemoteAddr())
		if !t.o.Persistent {
			return t.serveConn(ctx, c, b)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := t.serveConn(ctx, c, b); err != nil && ctx.Err() == nil {
				t.eprintf("connection from %v: %v", c.RemoteAddr(), err)
			}
		}()
	}
}

// serveConn runs the server's half of the loop until the client disconnects.
func (t *pinger) serveConn(ctx context.Context, c *rdmacm.Conn, b *buffers) (err error) {
	defer func() { err = errors.Join(err, tool.Hangup(ctx, c), b.free()) }()
	q := newQueues(c)
	for {
		// The client's source buffer.
		if err := q.recv(ctx); err != nil {
			return t.ended(err, "server")
		}
		addr, rkey, size := b.peer()
		t.debugf("received rkey %#x addr %#x len %d from peer", rkey, addr, size)
		if int(size) > len(b.rdma) {
			return fmt.Errorf("peer advertised %d bytes, more than the %d of -S", size, len(b.rdma))
		}
		if err := q.postRecv(b.recvWR()); err != nil {
			return err
		}
		read := gorxe.SendWR{ID: wrRead, Opcode: gorxe.WRRDMARead, Flags: gorxe.SendSignaled,
			SGList: []gorxe.SGE{{Addr: b.rdmaMR.Addr(), Length: size, LKey: b.rdmaMR.LKey()}},
			RDMA:   gorxe.RDMAInfo{RemoteAddr: addr, RKey: rkey}}
		if err := q.sendAndWait(ctx, read); err != nil {
			return t.ended(err, "server")
		}
		if t.o.Verbose {
			t.printf("server ping data: %s", cString(b.rdma))
		}
		if err := q.post(b.sendWR()); err != nil {
			return err
		}
		// The client's sink buffer.
		if err := q.recv(ctx); err != nil {
			return t.ended(err, "server")
		}
		addr, rkey, _ = b.peer()
		if err := q.postRecv(b.recvWR()); err != nil {
			return err
		}
		n := min(len(cString(b.rdma))+1, len(b.rdma))
		write := gorxe.SendWR{ID: wrWrite, Opcode: gorxe.WRRDMAWrite, Flags: gorxe.SendSignaled,
			SGList: []gorxe.SGE{{Addr: b.rdmaMR.Addr(), Length: uint32(n), LKey: b.rdmaMR.LKey()}},
			RDMA:   gorxe.RDMAInfo{RemoteAddr: addr, RKey: rkey}}
		if err := q.sendAndWait(ctx, write); err != nil {
			return t.ended(err, "server")
		}
		t.debugf("rdma write of %d bytes complete", n)
		if err := q.post(b.sendWR()); err != nil {
			return err
		}
	}
}

// ended turns the end of a loop into rping's outcome: a disconnection is a normal end (reported
// on stderr as rping does), anything else an error.
func (t *pinger) ended(err error, side string) error {
	if errors.Is(err, errDisconnected) {
		t.eprintf("%s DISCONNECT EVENT...", side)
		return nil
	}
	return err
}
