package oob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// DefaultTimeout bounds each step of an out-of-band exchange (connecting, each read and write):
// a peer that has not answered by then is not coming.
const DefaultTimeout = 10 * time.Second

// Out-of-band failure classes: every error of this file matches one of them, tool.ErrTimedOut or
// tool.ErrInterrupted with errors.Is, and the original network error too.
var (
	ErrPeerClosed = errors.New("peer closed the connection")
	ErrRefused    = errors.New("connection refused")
)

// Error is a failed out-of-band step. Its text is one line: the step, the peer when known, and
// the cause.
type Error struct {
	Op   string // what was being done, e.g. "couldn't read remote address"
	Peer string // host:port, or "" before a connection exists
	Err  error
}

func (e *Error) Error() string {
	if e.Peer == "" {
		return e.Op + ": " + e.Err.Error()
	}
	return e.Op + " (" + e.Peer + "): " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Conn is one out-of-band TCP connection. Every read and write is bounded by the connection's
// timeout and by the context it was made with: cancelling the context fails the call in progress.
type Conn struct {
	c       net.Conn
	ctx     context.Context
	timeout time.Duration
	stop    func() bool
	// closedMeans is what a connection closed by the peer in the middle of a read says about it.
	closedMeans string
}

// unknownPeer is what a closed connection means before the peer has proved it speaks the same
// protocol.
const unknownPeer = "a different tool or version on the other side?"

// ExplainClose says what the peer closing the connection means from now on: once the peer has
// answered in the tool's own protocol, a close is no longer a sign of a different tool, but of
// the peer stopping (it failed, or it was interrupted) or refusing what this side sent.
func (c *Conn) ExplainClose(why string) { c.closedMeans = why }

// Dial connects to host:port (a name or an address; IPv6 addresses with or without brackets),
// waiting at most timeout (0: no limit besides the system's) or until ctx ends.
func Dial(ctx context.Context, host string, port int, timeout time.Duration) (*Conn, error) {
	target := net.JoinHostPort(trimBrackets(host), strconv.Itoa(port))
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		return nil, &Error{Op: "Couldn't connect to " + target, Err: cause(ctx, err, timeout)}
	}
	return newConn(ctx, c, timeout), nil
}

// Listener accepts the out-of-band connection of a server.
type Listener struct {
	l net.Listener
}

// Listen listens on every local address (IPv4 and IPv6) at port, as the C tools' servers do.
func Listen(ctx context.Context, port int) (*Listener, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return nil, &Error{Op: "Couldn't listen to port " + strconv.Itoa(port), Err: cause(ctx, err, 0)}
	}
	return &Listener{l: l}, nil
}

// Port returns the port the listener is bound to (useful after Listen with port 0).
func (l *Listener) Port() int { return l.l.Addr().(*net.TCPAddr).Port }

// Accept waits for one connection, at most wait (0: until ctx ends), and returns it with timeout
// (0: none) as its limit for each read and write.
func (l *Listener) Accept(ctx context.Context, wait, timeout time.Duration) (*Conn, error) {
	tl := l.l.(*net.TCPListener)
	if wait > 0 {
		_ = tl.SetDeadline(time.Now().Add(wait))
	}
	stop := context.AfterFunc(ctx, func() { _ = tl.SetDeadline(time.Now()) })
	c, err := tl.Accept()
	stop()
	_ = tl.SetDeadline(time.Time{})
	if err != nil {
		return nil, &Error{Op: "accept() failed", Err: cause(ctx, err, wait)}
	}
	return newConn(ctx, c, timeout), nil
}

// Close stops listening.
func (l *Listener) Close() error { return l.l.Close() }

func newConn(ctx context.Context, c net.Conn, timeout time.Duration) *Conn {
	oc := &Conn{c: c, ctx: ctx, timeout: timeout, closedMeans: unknownPeer}
	oc.stop = context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	return oc
}

// Peer returns the remote address as host:port.
func (c *Conn) Peer() string { return c.c.RemoteAddr().String() }

// ReadFull reads exactly len(p) bytes; op names the step in the error.
func (c *Conn) ReadFull(p []byte, op string) error {
	c.arm()
	n, err := io.ReadFull(c.c, p)
	if err != nil {
		return c.fail(op, n, len(p), err)
	}
	return nil
}

// Read does one read into p, as the C tools do for their final "done" message, and returns the
// byte count. A peer that closes the connection without sending anything is an error.
func (c *Conn) Read(p []byte, op string) (int, error) {
	c.arm()
	n, err := c.c.Read(p)
	if n == 0 && err != nil {
		return 0, c.fail(op, 0, len(p), err)
	}
	return n, nil
}

// Write writes all of p; op names the step in the error.
func (c *Conn) Write(p []byte, op string) error {
	c.arm()
	if _, err := c.c.Write(p); err != nil {
		return &Error{Op: op, Peer: c.Peer(), Err: cause(c.ctx, err, c.timeout)}
	}
	return nil
}

// Close closes the connection.
func (c *Conn) Close() error {
	c.stop()
	return c.c.Close()
}

// arm starts the timeout of the next step.
func (c *Conn) arm() {
	if c.ctx.Err() != nil {
		_ = c.c.SetDeadline(time.Now())
		return
	}
	if c.timeout > 0 {
		_ = c.c.SetDeadline(time.Now().Add(c.timeout))
	}
}

func (c *Conn) fail(op string, got, want int, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return &Error{Op: op, Peer: c.Peer(),
			Err: &reason{fmt.Sprintf("%v after %d of %d bytes (%s)", ErrPeerClosed, got, want, c.closedMeans), []error{ErrPeerClosed, err}}}
	}
	why := cause(c.ctx, err, c.timeout)
	if got > 0 && errors.Is(why, tool.ErrTimedOut) {
		why = &reason{fmt.Sprintf("%v with %d of %d bytes received (%s)", why, got, want, unknownPeer), []error{why}}
	}
	return &Error{Op: op, Peer: c.Peer(), Err: why}
}

// cause reduces a network error to a short reason, keeping both the reason's class and the
// original error matchable.
func cause(ctx context.Context, err error, timeout time.Duration) error {
	var errno syscall.Errno
	var dns *net.DNSError
	switch {
	case ctx.Err() != nil:
		return &reason{tool.ErrInterrupted.Error(), []error{tool.ErrInterrupted, context.Cause(ctx), err}}
	case errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		msg := tool.ErrTimedOut.Error()
		if timeout > 0 {
			msg += " after " + timeout.String()
		}
		return &reason{msg, []error{tool.ErrTimedOut, err}}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &reason{"connection refused (no server listening?)", []error{ErrRefused, err}}
	case errors.As(err, &dns):
		return &reason{dns.Err, []error{err}}
	case errors.As(err, &errno):
		return &reason{errno.Error(), []error{err}}
	}
	return err
}

// reason is a short message standing for longer errors, which stay matchable.
type reason struct {
	msg  string
	errs []error
}

func (r *reason) Error() string   { return r.msg }
func (r *reason) Unwrap() []error { return r.errs }

func trimBrackets(h string) string {
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		return h[1 : len(h)-1]
	}
	return h
}
