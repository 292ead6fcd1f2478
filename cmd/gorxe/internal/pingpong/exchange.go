package pingpong

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/oob"
)

// clientExchange connects to the server, sends mine padded with zero addresses to count messages,
// reads the server's count messages and ends with "done". The server has connected its QPs by
// the time it answers.
func clientExchange(ctx context.Context, host string, port int, timeout time.Duration, mine []Dest, count int) ([]Dest, error) {
	c, err := oob.Dial(ctx, host, port, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Write(encodeMsgs(mine, count), "Couldn't send local address"); err != nil {
		return nil, err
	}
	if mine[0].GID.IsZero() {
		// A server closes without answering when it cannot connect to the address it read; with
		// no -g that address has no GID, which RoCE cannot do without.
		c.ExplainClose(noGIDRefused)
	}
	remote, err := readMsgs(c, count)
	if err != nil {
		return nil, err
	}
	if err := c.Write(doneMsg, "Couldn't write remote address"); err != nil {
		return nil, err
	}
	return remote, nil
}

// noGIDRefused is what the server hanging up on an address without a GID means.
const noGIDRefused = "the server refused this side's address: without -g it has no GID, and RoCE needs one; give both sides -g, e.g. -g 1"

// serverExchange accepts one client, reads its count messages, lets connect bring the local QPs
// to RTS against them, answers with mine and waits for the client's "done".
func serverExchange(ctx context.Context, ln *oob.Listener, timeout time.Duration, mine []Dest, count int, connect func([]Dest) error) ([]Dest, error) {
	c, err := ln.Accept(ctx, 0, timeout)
	ln.Close()
	if err != nil {
		return nil, err
	}
	defer c.Close()
	remote, err := readMsgs(c, count)
	if err != nil {
		return nil, err
	}
	if err := connect(remote); err != nil {
		return nil, err
	}
	if err := c.Write(encodeMsgs(mine, count), "Couldn't send local address"); err != nil {
		return nil, err
	}
	done := make([]byte, len(doneMsg))
	if err := c.ReadFull(done, "Couldn't recv \"done\""); err != nil {
		return nil, err
	}
	if !bytes.Equal(done, doneMsg) {
		return nil, &oob.Error{Op: "Couldn't recv \"done\"", Peer: c.Peer(),
			Err: fmt.Errorf("%w: got %q instead", ErrBadMessage, done)}
	}
	return remote, nil
}

func encodeMsgs(mine []Dest, count int) []byte {
	b := make([]byte, 0, count*MsgLen)
	for i := range count {
		var d Dest
		if i < len(mine) {
			d = mine[i]
		}
		b = d.AppendMsg(b)
	}
	return b
}

func readMsgs(c *oob.Conn, count int) ([]Dest, error) {
	out := make([]Dest, count)
	msg := make([]byte, MsgLen)
	for i := range out {
		if err := c.ReadFull(msg, "Couldn't read remote address"); err != nil {
			return nil, err
		}
		d, err := ParseMsg(msg)
		if err != nil {
			return nil, &oob.Error{Op: "Couldn't read remote address", Peer: c.Peer(), Err: err}
		}
		out[i] = d
	}
	return out, nil
}
