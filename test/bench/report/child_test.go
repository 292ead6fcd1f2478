//go:build linux

package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A child's own children die with it, so that a killed run leaves no process behind.
func TestChildKillTakesTheGroup(t *testing.T) {
	c, err := startChild(context.Background(), "test", nil, "sh", "-c", "sleep 300 & echo grandchild $!; wait")
	require.NoError(t, err)
	require.NoError(t, c.waitLine("grandchild", 30*time.Second))
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(c.out.String(), "grandchild")))
	require.NoError(t, err)
	c.kill()
	require.Eventually(t, func() bool { return gone(pid) }, 30*time.Second, 10*time.Millisecond)
}

func TestChildTimeoutKills(t *testing.T) {
	c, err := startChild(context.Background(), "test", nil, "sleep", "300")
	require.NoError(t, err)
	err = c.wait(time.Millisecond)
	require.ErrorContains(t, err, "no exit within")
	select {
	case <-c.done:
	default:
		require.Fail(t, "wait returned before the process was reaped")
	}
}

func TestChildCancelKills(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c, err := startChild(ctx, "test", nil, "sleep", "300")
	require.NoError(t, err)
	cancel()
	err = c.wait(time.Minute)
	require.Error(t, err)
}

func TestChildOutputAndStatus(t *testing.T) {
	c, err := startChild(context.Background(), "test", []string{"BENCH_TEST_VALUE=42"}, "sh", "-c", "echo out $BENCH_TEST_VALUE; echo oops >&2; exit 3")
	require.NoError(t, err)
	err = c.wait(time.Minute)
	require.ErrorContains(t, err, "exit status 3")
	assert.ErrorContains(t, err, "oops")
	assert.Equal(t, "out 42\n", c.out.String())
	assert.GreaterOrEqual(t, c.cpu(), time.Duration(0))
}

func TestWaitLineSeesEarlyExit(t *testing.T) {
	c, err := startChild(context.Background(), "test", nil, "sh", "-c", "echo starting; echo bad flag >&2; exit 2")
	require.NoError(t, err)
	err = c.waitLine(serverReady, time.Minute)
	require.ErrorContains(t, err, "before printing")
	assert.ErrorContains(t, err, "bad flag")
}

func TestLineBufferTail(t *testing.T) {
	l := newLineBuffer()
	assert.Equal(t, "no output", l.tail())
	_, _ = l.Write([]byte("one\ntwo\n\n"))
	assert.Equal(t, "two", l.tail())
	l.close()
	_, _ = l.Write([]byte("late\n"))
	assert.Equal(t, "late", l.tail(), "a write after close is kept, not a panic")
}

// gone says whether no process (not even a zombie) has the pid.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// A process that sleeps blocks at least once: getrusage counts a voluntary switch.
func TestChildCountsContextSwitches(t *testing.T) {
	c, err := startChild(context.Background(), "test", nil, "sh", "-c", "sleep 0.01")
	require.NoError(t, err)
	require.NoError(t, c.wait(time.Minute))
	p := c.counts()
	assert.Positive(t, p.voluntary)
	assert.GreaterOrEqual(t, p.involuntary, 0.0)
	assert.False(t, p.haveCalls, "system calls come from the tool's counters, not getrusage")
}

func TestEnviron(t *testing.T) {
	base := []string{"PATH=/bin", "GOMAXPROCS=4", "GOMAXPROCSX=1", "HOME=/h"}
	assert.Equal(t, []string{"PATH=/bin", "GOMAXPROCSX=1", "HOME=/h", "GORXE_PORT=9", "GOMAXPROCS=1"},
		environ(base, []string{"GORXE_PORT=9", "GOMAXPROCS=1"}), "set replaces")
	assert.Equal(t, []string{"PATH=/bin", "GOMAXPROCSX=1", "HOME=/h"},
		environ(base, []string{"GOMAXPROCS"}), "a bare name removes")
	assert.Equal(t, []string{"PATH=/bin", "GOMAXPROCS=4", "GOMAXPROCSX=1", "HOME=/h"}, base, "base untouched")
}

// A tool pair run at the default GOMAXPROCS has none in its environment.
func TestChildWithoutVariable(t *testing.T) {
	t.Setenv("GOMAXPROCS", "7")
	c, err := startChild(context.Background(), "test", []string{"GOMAXPROCS"}, "sh", "-c", `echo "[${GOMAXPROCS-unset}]"`)
	require.NoError(t, err)
	require.NoError(t, c.wait(time.Minute))
	assert.Equal(t, "[unset]\n", c.out.String())
}

// listensOn reads the kernel's TCP tables: a socket in LISTEN on the port, IPv4 or IPv6.
func TestListensOn(t *testing.T) {
	tcp := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 00000000:4A39 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n" +
		"   1: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 2 1 0 20 4 30 10 -1\n"
	tcp6 := "  sl  local_address                         remote_address                        st\n" +
		"   0: 00000000000000000000000000000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000\n"
	assert.True(t, listensOn([]string{tcp}, 0x4A39))
	assert.False(t, listensOn([]string{tcp}, 0x1F90), "established, not listening")
	assert.False(t, listensOn([]string{tcp}, 0x39), "the whole port, not its tail")
	assert.True(t, listensOn([]string{tcp, tcp6}, 80))
	assert.False(t, listensOn(nil, 80))
}

// waitListening sees a server that exits before it listens.
func TestWaitListeningSeesEarlyExit(t *testing.T) {
	c, err := startChild(context.Background(), "early", nil, "/bin/sh", "-c", "echo bye >&2; exit 3")
	require.NoError(t, err)
	err = c.waitListening(1, time.Minute)
	require.ErrorContains(t, err, "early exited (exit status 3) before listening on TCP port 1: bye")
}
