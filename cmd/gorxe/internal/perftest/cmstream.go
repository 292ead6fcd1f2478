package perftest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/oob"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// cmStream is the exchange over RDMA-CM (-z, and -R, which implies it), as perftest's
// create_comm_struct and rdma_client_connect / rdma_server_connect set it up: one RC connection
// to the test's port (RDMA-CM's TCP port space, 18515 by default) with one QP of one send and one
// receive work request, no responder resources or initiator depth, the retry count of
// --retry_count and RNR retries forever. Every message is one SEND of exactly its size into the
// peer's one posted receive. A side reposts its receive as soon as a message arrived, before it
// answers, so that with the exchange's strict turns (the client writes first, the server reads
// first) the peer's next message always finds it.
type cmStream struct {
	ctx     context.Context
	conn    *rdmacm.Conn
	pd      *gorxe.PD
	buf     *gorxe.Buffer
	mr      *gorxe.MR
	timeout time.Duration
	// closedMeans is what the peer disconnecting means from now on (see ExplainClose).
	closedMeans string
	// readLast is set when the last message of the exchange was the peer's.
	readLast bool
	wc       [1]gorxe.WC
}

// cmMsgMax is the largest message the exchange sends (a key message); the receive buffer holds
// more, so that a peer's longer message still arrives whole and its first bytes are read.
const (
	cmMsgMax  = 4096
	cmRecvOff = 0
	cmSendOff = cmMsgMax
)

// Work request IDs of the exchange's QP.
const (
	cmRecvID = iota + 1
	cmSendID
)

// newCMStreamResources registers the exchange's buffer on a PD of its own and returns the
// connection options of the exchange's QP with its first receive, posted before the QP can
// receive (perftest posts it before rdma_connect and rdma_accept).
func newCMStream(ctx context.Context, dev *gorxe.Device, p *Params) (*cmStream, *rdmacm.Options, error) {
	s := &cmStream{ctx: ctx, timeout: p.Timeout, closedMeans: "a different tool or version on the other side?"}
	var err error
	if s.pd, err = dev.AllocPD(); err != nil {
		return nil, nil, err
	}
	if s.buf, err = gorxe.AllocBuffer(2*cmMsgMax, gorxe.BufferOptions{}); err != nil {
		return nil, nil, errors.Join(err, s.free())
	}
	if s.mr, err = s.pd.RegMR(s.buf.Bytes(), gorxe.AccessLocalWrite); err != nil {
		return nil, nil, errors.Join(err, s.free())
	}
	o := &rdmacm.Options{PD: s.pd, Cap: gorxe.QPCap{MaxSendWR: 1, MaxRecvWR: 1, MaxSendSGE: 1, MaxRecvSGE: 1},
		NoRDMARead: true, Recv: []gorxe.RecvWR{s.recvWR()}}
	o.RetryCount, o.ZeroRetryCount = uint8(p.RetryCount), p.RetryCount == 0
	return s, o, nil
}

func (s *cmStream) recvWR() gorxe.RecvWR {
	return gorxe.RecvWR{ID: cmRecvID, SGList: []gorxe.SGE{{Addr: s.mr.Addr() + cmRecvOff, Length: cmMsgMax, LKey: s.mr.LKey()}}}
}

// peer names the other side in errors.
func (s *cmStream) peer() string {
	if s.conn == nil {
		return ""
	}
	return s.conn.RemoteAddr().String()
}

// SetTimeout bounds each following read and write; 0 removes the bound.
func (s *cmStream) SetTimeout(d time.Duration) { s.timeout = d }

// ExplainClose says what the peer disconnecting means from now on.
func (s *cmStream) ExplainClose(why string) { s.closedMeans = why }

// Write sends p as one message and waits for its completion.
func (s *cmStream) Write(p []byte, op string) error {
	if len(p) > cmMsgMax {
		return &oob.Error{Op: op, Peer: s.peer(), Err: fmt.Errorf("%w: message of %d bytes", ErrBadMessage, len(p))}
	}
	copy(s.buf.Bytes()[cmSendOff:], p)
	wr := gorxe.SendWR{ID: cmSendID, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled,
		SGList: []gorxe.SGE{{Addr: s.mr.Addr() + cmSendOff, Length: uint32(len(p)), LKey: s.mr.LKey()}}}
	if err := s.conn.QP().PostSend([]gorxe.SendWR{wr}); err != nil {
		return &oob.Error{Op: op, Peer: s.peer(), Err: err}
	}
	_, err := s.complete(s.conn.SendCQ(), op)
	s.readLast = false
	return err
}

// ReadFull receives one message into p. perftest copies as many bytes as it expects whatever
// arrived; a shorter message leaves the rest of p zero here, a longer one is cut to len(p).
func (s *cmStream) ReadFull(p []byte, op string) error {
	n, err := s.complete(s.conn.RecvCQ(), op)
	if err != nil {
		return err
	}
	s.readLast = true
	clear(p)
	copy(p, s.buf.Bytes()[cmRecvOff:cmRecvOff+min(n, len(p))])
	if err := s.conn.QP().PostRecv([]gorxe.RecvWR{s.recvWR()}); err != nil {
		return &oob.Error{Op: op, Peer: s.peer(), Err: err}
	}
	return nil
}

// complete waits for the next completion on cq, within the timeout and the run's context, and
// returns its byte count. A flushed work request means the peer disconnected (RDMA-CM moved the QP
// to the error state on its DREQ).
func (s *cmStream) complete(cq *gorxe.CQ, op string) (int, error) {
	ctx, cancel := s.ctx, context.CancelFunc(func() {})
	if s.timeout > 0 {
		ctx, cancel = context.WithTimeout(s.ctx, s.timeout)
	}
	defer cancel()
	for cq.Poll(s.wc[:]) == 0 {
		if err := cq.Wait(ctx); err != nil {
			switch {
			case s.ctx.Err() != nil:
				err = fmt.Errorf("%w: %w", tool.ErrInterrupted, err)
			case errors.Is(err, context.DeadlineExceeded):
				err = fmt.Errorf("%w after %v: %w", tool.ErrTimedOut, s.timeout, err)
			}
			return 0, &oob.Error{Op: op, Peer: s.peer(), Err: err}
		}
	}
	wc := s.wc[0]
	switch {
	case wc.Status == gorxe.WCSuccess:
		return int(wc.ByteLen), nil
	case wc.Status == gorxe.WCWRFlushErr:
		return 0, &oob.Error{Op: op, Peer: s.peer(), Err: fmt.Errorf("%w (%s)", oob.ErrPeerClosed, s.closedMeans)}
	}
	return 0, &oob.Error{Op: op, Peer: s.peer(), Err: fmt.Errorf("%w: %s", ErrCompletion, wc.Status)}
}

// Close disconnects the exchange's connection, waiting a little for the peer's answer, and
// releases its resources. A side whose last step was a read first waits, up to tool.Linger, for the
// peer to disconnect: disconnecting moves our QP to the error state, and should the acknowledgement
// of the peer's last SEND be lost, the peer's retransmission would find no QP to acknowledge it,
// and the peer would fail. The writer of the last message knows it arrived (its completion came)
// and disconnects at once, which ends the reader's wait; a perftest peer disconnects when it
// exits.
func (s *cmStream) Close() error {
	var err error
	if s.conn != nil {
		if s.readLast {
			s.awaitPeerDisconnect()
		}
		err = tool.Hangup(context.Background(), s.conn)
		s.conn = nil
	}
	return errors.Join(err, s.free())
}

// awaitPeerDisconnect waits until the peer disconnects the exchange, the connection ends, or
// tool.Linger passes.
func (s *cmStream) awaitPeerDisconnect() {
	timer := time.NewTimer(tool.Linger)
	defer timer.Stop()
	for {
		select {
		case e := <-s.conn.Events():
			if e.Type == rdmacm.EventDisconnected {
				return
			}
		case <-s.conn.Done():
			return
		case <-timer.C:
			return
		case <-s.ctx.Done():
			return
		}
	}
}

func (s *cmStream) free() error {
	var errs []error
	if s.mr != nil {
		errs = append(errs, s.mr.Dereg())
		s.mr = nil
	}
	if s.pd != nil {
		errs = append(errs, s.pd.Dealloc())
		s.pd = nil
	}
	if s.buf != nil {
		errs = append(errs, s.buf.Free())
		s.buf = nil
	}
	return errors.Join(errs...)
}
