package guestrpc

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTCPListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	if ok, err := TCPListening(port); err != nil || !ok {
		require.Fail(t, fmt.Sprintf("TCPListening(%d) = %v, %v while listening", port, ok, err))
	}
	ln.Close()
	if ok, err := TCPListening(port); err != nil || ok {
		require.Fail(t, fmt.Sprintf("TCPListening(%d) = %v, %v after close", port, ok, err))
	}
}

// TestUDPBound: a UDP socket of this process shows while it is open, on its port only; a socket
// of another process on the same port is not this process's.
func TestUDPBound(t *testing.T) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	port := conn.LocalAddr().(*net.UDPAddr).Port
	ok, err := UDPBound(os.Getpid(), port)
	require.NoError(t, err)
	assert.True(t, ok, "bound")
	ok, err = UDPBound(os.Getpid(), port+1)
	require.NoError(t, err)
	assert.False(t, ok, "another port")

	sleeper := Start([]string{"sleep", "30"}, nil, time.Minute)
	defer sleeper.Kill()
	ok, err = UDPBound(sleeper.Pid(), port)
	require.NoError(t, err)
	assert.False(t, ok, "another process's socket")

	conn.Close()
	ok, err = UDPBound(os.Getpid(), port)
	require.NoError(t, err)
	assert.False(t, ok, "closed")
	_, err = UDPBound(0x7ffffff0, port)
	assert.Error(t, err, "no such process")
}

func TestStartCollectsOutputAndExitCode(t *testing.T) {
	r := Start([]string{"sh", "-c", "echo out; echo err >&2; exit 3"}, nil, 10*time.Second).Wait()
	assert.Equal(t, 3, r.ExitCode, "result %+v", r)
	assert.False(t, r.TimedOut, "result %+v", r)
	assert.Contains(t, r.Output, "out", "result %+v", r)
	assert.Contains(t, r.Output, "err", "result %+v", r)
}

func TestStartKillsAtTimeout(t *testing.T) {
	r := Start([]string{"sleep", "30"}, nil, 100*time.Millisecond).Wait()
	assert.True(t, r.TimedOut, "result %+v, want a timed-out kill", r)
	assert.Equal(t, -1, r.ExitCode, "result %+v, want a timed-out kill", r)
}

func TestStartMissingProgram(t *testing.T) {
	r := Start([]string{"/nonexistent/program"}, nil, time.Second).Wait()
	assert.Equal(t, -1, r.ExitCode, "result %+v, want a start error", r)
	assert.NotEqual(t, "", r.Error, "result %+v, want a start error", r)
	if r := Start(nil, nil, time.Second).Wait(); r.Error == "" {
		assert.Fail(t, fmt.Sprintf("empty argv: %+v", r))
	}
}

func TestKillAndWaitTimeout(t *testing.T) {
	p := Start([]string{"sleep", "30"}, nil, time.Minute)
	_, done := p.WaitTimeout(50 * time.Millisecond)
	require.False(t, done, "sleep 30 ended early")
	require.False(t, p.Exited(), "sleep 30 ended early")
	p.Kill()
	r := p.Wait()
	assert.False(t, r.TimedOut, "after Kill: %+v", r)
	assert.Equal(t, -1, r.ExitCode, "after Kill: %+v", r)
	assert.True(t, p.Exited(), "after Kill: %+v", r)
}
