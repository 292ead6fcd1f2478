package pingpong

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/oob"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// fakePeer runs script on the other end of a TCP connection: as a server listening on a free port
// (returned), or as a client of port.
func fakeServer(t *testing.T, script func(c net.Conn) error) (int, <-chan error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		defer l.Close()
		c, err := l.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		done <- script(c)
	}()
	return l.Addr().(*net.TCPAddr).Port, done
}

func fakeClient(t *testing.T, port int, script func(c net.Conn) error) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		done <- script(c)
	}()
	return done
}

func expect(c net.Conn, want []byte) error {
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return errors.New("peer sent " + strconv.Quote(string(got)) + ", want " + strconv.Quote(string(want)))
	}
	return nil
}

func listener(t *testing.T) *oob.Listener {
	t.Helper()
	ln, err := oob.Listen(context.Background(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	return ln
}

// TestClientAgainstCapturedServer replays the C server of the captured rc run against
// clientExchange, sending the captured client's address: every byte must match the capture.
func TestClientAgainstCapturedServer(t *testing.T) {
	for _, tool := range []string{"rc", "uc", "ud"} {
		client, server := readGolden(t, tool+"-client.bin"), readGolden(t, tool+"-server.bin")
		mine, _ := ParseMsg(client[:MsgLen])
		port, done := fakeServer(t, func(c net.Conn) error {
			if err := expect(c, client[:MsgLen]); err != nil {
				return err
			}
			if _, err := c.Write(server); err != nil {
				return err
			}
			return expect(c, client[MsgLen:])
		})
		remote, err := clientExchange(context.Background(), "127.0.0.1", port, time.Second, []Dest{mine}, 1)
		require.NoError(t, err, "%s", tool)
		want, _ := ParseMsg(server)
		assert.False(t, len(remote) != 1 || remote[0] != want, "%s: remote = %+v, want %+v", tool, remote, want)
		assert.NoError(t, <-done, "%s: captured server", tool)
	}
}

// TestServerAgainstCapturedClient replays the captured C clients against serverExchange: it must
// connect before answering and answer with exactly the captured server's bytes.
func TestServerAgainstCapturedClient(t *testing.T) {
	for _, tc := range []struct {
		tool  string
		count int
	}{{"rc", 1}, {"uc", 1}, {"ud", 1}, {"srq", srqMsgs}} {
		client, server := readGolden(t, tc.tool+"-client.bin"), readGolden(t, tc.tool+"-server.bin")
		var mine []Dest
		for i := range tc.count {
			if d, _ := ParseMsg(server[i*MsgLen : (i+1)*MsgLen]); d.QPN != 0 {
				mine = append(mine, d)
			}
		}
		ln := listener(t)
		connected := false
		done := fakeClient(t, ln.Port(), func(c net.Conn) error {
			if _, err := c.Write(client[:tc.count*MsgLen]); err != nil {
				return err
			}
			if err := expect(c, server); err != nil {
				return err
			}
			_, err := c.Write(client[tc.count*MsgLen:])
			return err
		})
		remote, err := serverExchange(context.Background(), ln, time.Second, mine, tc.count, func(r []Dest) error {
			connected = len(r) == tc.count && r[0].GID == clientGID
			return nil
		})
		require.NoError(t, err, "%s", tc.tool)
		if !connected || remote[0].PSN == 0 {
			assert.Fail(t, fmt.Sprintf("%s: connect saw %v, remote[0] = %+v", tc.tool, connected, remote[0]))
		}
		assert.NoError(t, <-done, "%s: captured client", tc.tool)
	}
}

// TestExchangeErrors covers peers that speak another protocol, vanish or stay silent: each ends
// in one line naming the step and the cause.
func TestExchangeErrors(t *testing.T) {
	msg := readGolden(t, "rc-client.bin")[:MsgLen]
	mine := []Dest{{QPN: 0x11, PSN: 1, GID: serverGID}}
	ok := func([]Dest) error { return nil }
	tests := []struct {
		name   string
		script func(net.Conn) error
		is     error
		text   string
	}{
		{"perftest-like preamble", func(c net.Conn) error {
			_, err := c.Write([]byte("0000000000000006")) // 16 bytes, then the peer waits
			_, _ = c.Read(make([]byte, 1))
			return err
		}, tool.ErrTimedOut, "timed out after 100ms with 16 of 52 bytes received"},
		{"short message then close", func(c net.Conn) error {
			_, err := c.Write(msg[:20])
			return err
		}, oob.ErrPeerClosed, "after 20 of 52 bytes"},
		{"garbage", func(c net.Conn) error {
			_, err := c.Write(bytes.Repeat([]byte{'A'}, MsgLen))
			return err
		}, ErrBadMessage, "not a pingpong address message"},
		{"no done", func(c net.Conn) error {
			if _, err := c.Write(msg); err != nil {
				return err
			}
			return expect(c, mine[0].AppendMsg(nil))
		}, oob.ErrPeerClosed, `Couldn't recv "done"`},
		{"wrong done", func(c net.Conn) error {
			if _, err := c.Write(msg); err != nil {
				return err
			}
			if err := expect(c, mine[0].AppendMsg(nil)); err != nil {
				return err
			}
			_, err := c.Write([]byte("DONE\x00"))
			return err
		}, ErrBadMessage, `got "DONE\x00"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ln := listener(t)
			done := fakeClient(t, ln.Port(), tc.script)
			_, err := serverExchange(context.Background(), ln, 100*time.Millisecond, mine, 1, ok)
			assert.ErrorIs(t, err, tc.is, "error %q, want one line matching %v containing %q", err, tc.is, tc.text)
			assert.Contains(t, err.Error(), tc.text, "error %q, want one line matching %v containing %q", err, tc.is, tc.text)
			assert.NotContains(t, err.Error(), "\n", "error %q, want one line matching %v containing %q", err, tc.is, tc.text)
			<-done
		})
	}
}

func TestClientErrors(t *testing.T) {
	mine := []Dest{{QPN: 0x11, PSN: 1, GID: clientGID}}
	t.Run("silent server", func(t *testing.T) {
		hold := make(chan struct{})
		port, done := fakeServer(t, func(c net.Conn) error { <-hold; return nil })
		_, err := clientExchange(context.Background(), "127.0.0.1", port, 50*time.Millisecond, mine, 1)
		close(hold)
		<-done
		assert.ErrorIs(t, err, tool.ErrTimedOut, "error %q", err)
		assert.Contains(t, err.Error(), "Couldn't read remote address (127.0.0.1:", "error %q", err)
	})
	t.Run("server fails to connect", func(t *testing.T) {
		// A server whose QP transition fails closes the connection without answering.
		ln := listener(t)
		srv := make(chan error, 1)
		go func() {
			_, err := serverExchange(context.Background(), ln, time.Second, mine, 1, func([]Dest) error {
				return errors.New("Failed to modify QP to RTR")
			})
			srv <- err
		}()
		_, err := clientExchange(context.Background(), "127.0.0.1", ln.Port(), time.Second, mine, 1)
		assert.ErrorIs(t, err, oob.ErrPeerClosed, "client error %q", err)
		assert.Contains(t, err.Error(), "after 0 of 52 bytes", "client error %q", err)
		if err := <-srv; err == nil || err.Error() != "Failed to modify QP to RTR" {
			assert.Fail(t, fmt.Sprintf("server error %v", err))
		}
	})
	t.Run("canceled", func(t *testing.T) {
		hold := make(chan struct{})
		port, done := fakeServer(t, func(c net.Conn) error { <-hold; return nil })
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		_, err := clientExchange(ctx, "127.0.0.1", port, 0, mine, 1)
		close(hold)
		<-done
		assert.ErrorIs(t, err, tool.ErrInterrupted, "error %q", err)
	})
}

// TestClientWithoutGIDRefused: a client run without -g sends the zero GID; the server cannot
// connect to it and hangs up. The client's error must say why instead of blaming another tool.
func TestClientWithoutGIDRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		gid  gorxe.GID
		want string
	}{
		{"no -g", gorxe.GID{}, "(the server refused this side's address: without -g it has no GID, and RoCE needs one; give both sides -g, e.g. -g 1)"},
		{"with -g", clientGID, "(a different tool or version on the other side?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln := listener(t)
			srv := make(chan error, 1)
			go func() {
				_, err := serverExchange(context.Background(), ln, time.Second, []Dest{{QPN: 0x12, PSN: 2, GID: serverGID}}, 1,
					func([]Dest) error { return errors.New("Failed to modify QP to RTR") })
				srv <- err
			}()
			_, err := clientExchange(context.Background(), "127.0.0.1", ln.Port(), time.Second, []Dest{{QPN: 0x11, PSN: 1, GID: tc.gid}}, 1)
			require.ErrorIs(t, err, oob.ErrPeerClosed)
			assert.Contains(t, err.Error(), "Couldn't read remote address (127.0.0.1:")
			assert.True(t, strings.HasSuffix(err.Error(), "peer closed the connection after 0 of 52 bytes "+tc.want), err.Error())
			require.EqualError(t, <-srv, "Failed to modify QP to RTR")
		})
	}
}
