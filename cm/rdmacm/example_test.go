package rdmacm_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/netio"
)

// echoServer accepts one connection, sends back the first message it receives and hangs up once
// the echo is acknowledged (hanging up earlier would flush it).
func echoServer(ctx context.Context, dev *gorxe.Device, addr netip.AddrPort, ready chan<- struct{}) error {
	l, err := rdmacm.Listen(ctx, dev, addr, nil)
	if err != nil {
		return err
	}
	defer l.Close()
	close(ready)
	c, err := l.Accept(ctx)
	if err != nil {
		return err
	}
	defer func() { c.Close(); <-c.Done() }()
	buf := make([]byte, 64)
	mr, err := c.PD().RegMR(buf, gorxe.AccessLocalWrite)
	if err != nil {
		return err
	}
	defer mr.Dereg()
	sge := []gorxe.SGE{{Addr: mr.Addr(), Length: uint32(len(buf)), LKey: mr.LKey()}}
	if err := c.QP().PostRecv([]gorxe.RecvWR{{ID: 1, SGList: sge}}); err != nil {
		return err
	}
	wc, err := next(ctx, c.RecvCQ())
	if err != nil {
		return err
	}
	sge[0].Length = wc.ByteLen
	if err := c.QP().PostSend([]gorxe.SendWR{{ID: 2, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled, SGList: sge}}); err != nil {
		return err
	}
	if _, err := next(ctx, c.SendCQ()); err != nil {
		return err
	}
	return c.Disconnect(ctx)
}

// echoClient connects, sends msg, returns the echo and waits for the server to hang up.
func echoClient(ctx context.Context, dev *gorxe.Device, addr netip.AddrPort, msg string) (string, error) {
	c, err := rdmacm.Dial(ctx, dev, addr, nil)
	if err != nil {
		return "", err
	}
	defer func() { c.Close(); <-c.Done() }()
	buf := make([]byte, 64)
	mr, err := c.PD().RegMR(buf, gorxe.AccessLocalWrite)
	if err != nil {
		return "", err
	}
	defer mr.Dereg()
	sge := []gorxe.SGE{{Addr: mr.Addr(), Length: uint32(len(buf)), LKey: mr.LKey()}}
	if err := c.QP().PostRecv([]gorxe.RecvWR{{ID: 1, SGList: sge}}); err != nil {
		return "", err
	}
	send := []gorxe.SGE{{Addr: mr.Addr() + 32, Length: uint32(copy(buf[32:], msg)), LKey: mr.LKey()}}
	if err := c.QP().PostSend([]gorxe.SendWR{{ID: 2, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled, SGList: send}}); err != nil {
		return "", err
	}
	if _, err := next(ctx, c.SendCQ()); err != nil {
		return "", err
	}
	wc, err := next(ctx, c.RecvCQ())
	if err != nil {
		return "", err
	}
	for e := range c.Events() {
		if e.Type == rdmacm.EventDisconnected {
			break
		}
	}
	return fmt.Sprintf("echo from %v: %s", c.RemoteAddr(), buf[:wc.ByteLen]), nil
}

// next waits for one completion and fails on an unsuccessful one.
func next(ctx context.Context, cq *gorxe.CQ) (gorxe.WC, error) {
	wc := make([]gorxe.WC, 1)
	for cq.Poll(wc) == 0 {
		if err := cq.Wait(ctx); err != nil {
			return wc[0], err
		}
	}
	if wc[0].Status != gorxe.WCSuccess {
		return wc[0], fmt.Errorf("work request %d: %v", wc[0].WRID, wc[0].Status)
	}
	return wc[0], nil
}

// echo runs an echo server and its client on two devices of an in-memory network and returns what
// the client got back.
func echo() (string, error) {
	fab := netio.NewFabric(netio.FabricConfig{})
	defer fab.Close()
	open := func(addr string) (*gorxe.Device, error) {
		return gorxe.Open(gorxe.Config{Addr: netip.MustParseAddr(addr),
			Network: fab.Network()})
	}
	server, err := open("10.0.0.2")
	if err != nil {
		return "", err
	}
	defer server.Close()
	client, err := open("10.0.0.1")
	if err != nil {
		return "", err
	}
	defer client.Close()

	ctx := context.Background()
	addr := netip.MustParseAddrPort("10.0.0.2:7174")
	ready, served := make(chan struct{}), make(chan error, 1)
	go func() { served <- echoServer(ctx, server, addr, ready) }()
	<-ready
	got, err := echoClient(ctx, client, addr, "hello over RDMA-CM")
	return got, errors.Join(err, <-served)
}

// An echo server and its client on two devices of an in-memory network (echo, echoServer and
// echoClient above). On real networks the devices are opened with Config.Addr or Config.Interface
// alone.
func Example() {
	got, err := echo()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got)
}

// TestEcho runs the example on a synctest bubble's clock rather than as an example with an
// output, which would wait in real time for the connections' timewait (half a second with
// RDMA-CM's timeouts) before Done closes.
func TestEcho(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got, err := echo()
		require.NoError(t, err)
		require.Equal(t, "echo from 10.0.0.2:7174: hello over RDMA-CM", got)
	})
}
