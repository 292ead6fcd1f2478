package oob

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// listen starts a listener on a free port of the loopback.
func listen(t *testing.T) *Listener {
	t.Helper()
	l, err := Listen(context.Background(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l
}

// silentPeer accepts one connection and keeps it open, saying nothing, until the test ends.
func silentPeer(t *testing.T, l *Listener) {
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	go func() {
		c, err := l.Accept(context.Background(), time.Second, time.Second)
		if err == nil {
			<-hold
			c.Close()
		}
	}()
}

func checkOneLine(t *testing.T, err error, is error, contains string) {
	t.Helper()
	require.Error(t, err, "no error")
	assert.ErrorIs(t, err, is, "error %q does not match %v", err, is)
	assert.Contains(t, err.Error(), contains, "error %q, want one line containing %q", err, contains)
	assert.NotContains(t, err.Error(), "\n", "error %q, want one line containing %q", err, contains)
}

func TestExchange(t *testing.T) {
	l := listen(t)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		c, err := l.Accept(ctx, time.Second, time.Second)
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		buf := make([]byte, 4)
		if err := c.ReadFull(buf, "read"); err != nil {
			done <- err
			return
		}
		done <- c.Write(append(buf, '!'), "write")
	}()
	c, err := Dial(ctx, "127.0.0.1", l.Port(), time.Second)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Write([]byte("ping"), "write"))
	buf := make([]byte, 5)
	if err := c.ReadFull(buf, "read"); err != nil || string(buf) != "ping!" {
		require.Fail(t, fmt.Sprintf("got %q, %v", buf, err))
	}
	require.NoError(t, <-done)
}

func TestDialRefused(t *testing.T) {
	// A port that was just free: nobody listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	_, err = Dial(context.Background(), "127.0.0.1", port, time.Second)
	checkOneLine(t, err, ErrRefused, "Couldn't connect to 127.0.0.1:")
}

func TestDialUnknownHost(t *testing.T) {
	_, err := Dial(context.Background(), "no-such-host.invalid", 18515, time.Second)
	var oe *Error
	require.ErrorAs(t, err, &oe, "error %v, want a one-line *Error", err)
	require.NotContains(t, err.Error(), "\n", "error %v, want a one-line *Error", err)
}

func TestReadTimeout(t *testing.T) {
	l := listen(t)
	ctx := context.Background()
	silentPeer(t, l)
	c, err := Dial(ctx, "127.0.0.1", l.Port(), 50*time.Millisecond)
	require.NoError(t, err)
	defer c.Close()
	err = c.ReadFull(make([]byte, 52), "couldn't read remote address")
	checkOneLine(t, err, tool.ErrTimedOut, "couldn't read remote address (127.0.0.1:")
	assert.Contains(t, err.Error(), "timed out after 50ms", "error %q does not say how long it waited", err)
}

func TestReadPeerClosed(t *testing.T) {
	l := listen(t)
	ctx := context.Background()
	go func() {
		c, err := l.Accept(ctx, time.Second, time.Second)
		if err == nil {
			_ = c.Write([]byte("short"), "write")
			c.Close()
		}
	}()
	c, err := Dial(ctx, "127.0.0.1", l.Port(), time.Second)
	require.NoError(t, err)
	defer c.Close()
	err = c.ReadFull(make([]byte, 52), "couldn't read remote address")
	checkOneLine(t, err, ErrPeerClosed, "after 5 of 52 bytes")
}

func TestAcceptTimeoutAndCancel(t *testing.T) {
	l := listen(t)
	_, err := l.Accept(context.Background(), 20*time.Millisecond, 0)
	checkOneLine(t, err, tool.ErrTimedOut, "accept() failed")

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = l.Accept(ctx, 0, 0)
	checkOneLine(t, err, tool.ErrInterrupted, "interrupted")
	assert.ErrorIs(t, err, context.Canceled, "error %v does not match context.Canceled", err)
}

func TestReadCanceled(t *testing.T) {
	l := listen(t)
	silentPeer(t, l)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Dial(ctx, "127.0.0.1", l.Port(), 0)
	require.NoError(t, err)
	defer c.Close()
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err = c.Read(make([]byte, 5), "couldn't read done")
	checkOneLine(t, err, tool.ErrInterrupted, "couldn't read done")
}

func TestExplainClose(t *testing.T) {
	tests := []struct {
		name, explain, want string
	}{
		{"unknown peer", "", "couldn't read remote address (127.0.0.1:PORT): peer closed the connection after 0 of 52 bytes (a different tool or version on the other side?)"},
		{"known peer", "the peer stopped early; its output says why", "couldn't read remote address (127.0.0.1:PORT): peer closed the connection after 0 of 52 bytes (the peer stopped early; its output says why)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := listen(t)
			ctx := context.Background()
			accepted := make(chan struct{})
			go func() {
				defer close(accepted)
				if c, err := l.Accept(ctx, time.Second, time.Second); err == nil {
					c.Close()
				}
			}()
			c, err := Dial(ctx, "127.0.0.1", l.Port(), time.Second)
			require.NoError(t, err)
			defer c.Close()
			if tt.explain != "" {
				c.ExplainClose(tt.explain)
			}
			err = c.ReadFull(make([]byte, 52), "couldn't read remote address")
			<-accepted
			require.ErrorIs(t, err, ErrPeerClosed)
			port := c.Peer()[strings.LastIndexByte(c.Peer(), ':')+1:]
			assert.Equal(t, strings.ReplaceAll(tt.want, "PORT", port), err.Error())
		})
	}
}
