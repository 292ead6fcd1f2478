package rping

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/devselect"
)

// Run runs the server or the client until the pings are done, the peer disconnects, an error
// occurs or ctx ends.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	t := &pinger{o: o, stdout: stdout, stderr: stderr}
	if o.Server {
		return t.server(ctx)
	}
	return t.client(ctx)
}

// pinger carries the options and the output streams.
type pinger struct {
	o              Options
	stdout, stderr io.Writer
	mu             sync.Mutex // serialises the output of a persistent server's connections
}

func (t *pinger) debugf(format string, a ...any) {
	if t.o.Debug {
		t.printf(format, a...)
	}
}

func (t *pinger) printf(format string, a ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.stdout, format+"\n", a...)
}

func (t *pinger) eprintf(format string, a ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.stderr, format+"\n", a...)
}

// openDevice opens a device bound to --bind, else to bind, else to the default selection.
func (t *pinger) openDevice(bind string) (*tool.Session, error) {
	s, err := t.o.Common.OpenCM(devselect.Selection{Bind: bind}, t.stdout, t.stderr)
	if err != nil {
		return nil, err
	}
	t.debugf("opened device %s on %v", s.Dev.Name(), s.Dev.LocalAddrs())
	return s, nil
}

// connOptions are rping's QP and connection parameters (responder resources and initiator depth
// 1, 7 retries, RNR retries forever: the Options defaults) with the receive posted before the
// connection is up.
func connOptions(b *buffers) *rdmacm.Options {
	return &rdmacm.Options{PD: b.pd, Recv: []gorxe.RecvWR{b.recvWR()},
		Cap: gorxe.QPCap{MaxSendWR: sqDepth, MaxRecvWR: rqDepth, MaxSendSGE: 1, MaxRecvSGE: 1}}
}
