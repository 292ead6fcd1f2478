package oob

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// TestSetTimeout checks that a limit set on an open connection applies to the next step, and that
// removing it lets a step wait longer than the limit the connection was made with.
func TestSetTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	reply := make(chan struct{})
	go func() {
		s, err := l.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		<-reply
		_, _ = s.Write([]byte("late"))
		_, _ = s.Read(make([]byte, 1))
	}()
	c, err := Dial(context.Background(), "127.0.0.1", l.Addr().(*net.TCPAddr).Port, 30*time.Millisecond)
	require.NoError(t, err)
	defer c.Close()

	c.SetTimeout(0)
	time.AfterFunc(100*time.Millisecond, func() { close(reply) })
	buf := make([]byte, 4)
	if err := c.ReadFull(buf, "read"); err != nil || string(buf) != "late" {
		require.Fail(t, fmt.Sprintf("without a limit: got %q, %v", buf, err))
	}

	c.SetTimeout(20 * time.Millisecond)
	err = c.ReadFull(buf, "couldn't read remote address")
	checkOneLine(t, err, tool.ErrTimedOut, "timed out after 20ms")
}
