package perftest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/cm/rdmacm"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// qpnMessage is the receive a server posts for the client's QPN with -R -c UD: the GRH in front of
// the 4 bytes the client sends (perftest's UD_ADDITION + sizeof(uint32_t)).
const qpnMessage = gorxe.GRHSize + 4

// udOptions are the RDMA-CM parameters of a UD test's QP i: the test's PD, the QP's CQs, the
// capabilities, and -T as the TOS of the address handle to the peer (rdma_set_option before the
// route).
func (r *rdma) udOptions(i int) *rdmacm.UDOptions {
	o := &rdmacm.UDOptions{Options: rdmacm.Options{PD: r.pd, SendCQ: r.sendCQ.of(i), RecvCQ: r.recvCQ.of(i), Cap: r.caps}}
	if r.p.TOS != defTOS {
		o.TrafficClass = uint8(r.p.TOS)
	}
	return o
}

// exchangesQPN reports whether the UD QPs of the test send to the server, which then needs the
// client's QPN: the SIDR_REQ does not carry it, so perftest's client sends it as the immediate
// data of a SEND once the SIDR_REP came, to a receive the server posted before answering. Only
// latency tests need it: the server of a (one-way) bandwidth test only receives.
func (r *rdma) exchangesQPN() bool { return r.p.Test.Kind == Lat }

// cmConnectUD is -R with -c UD (perftest's rdma_cm connection of RDMA_PS_UDP ids): a client
// resolves the server's UD QP for each of its QPs with SIDR, a server answers each request with a
// new QP. The QPs are in RTS with RDMA-CM's Q_Key, which the messages carry to the peer as well.
func (r *rdma) cmConnectUD(ctx context.Context) ([]Dest, error) {
	for i := range r.p.NumQPs {
		c, err := r.cmConnectOneUD(ctx, i)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("%w after %v", tool.ErrTimedOut, r.p.Timeout)
		}
		if err != nil {
			return nil, stepErr(err, "Failed to create RDMA CM connection")
		}
		r.udConns = append(r.udConns, c)
		r.qps = append(r.qps, c.QP())
	}
	r.setLocal()
	return r.local, nil
}

// cmConnectOneUD resolves, or accepts, the UD peer of QP i and fills r.ud[i].
func (r *rdma) cmConnectOneUD(ctx context.Context, i int) (*rdmacm.UDConn, error) {
	stepCtx, cancel := r.stepContext(ctx)
	defer cancel()
	o := r.udOptions(i)
	w := waiter{ctx: stepCtx, events: r.p.Events, stall: 1 << 62}
	area := r.mr.Addr() + uint64(i*r.area)
	if r.cm.ud != nil {
		if r.exchangesQPN() {
			o.Recv = []gorxe.RecvWR{{SGList: []gorxe.SGE{{Addr: area, Length: qpnMessage, LKey: r.mr.LKey()}}}}
		}
		c, err := r.cm.ud.Accept(stepCtx, o)
		if err != nil {
			return nil, err
		}
		dst := gorxe.UDInfo{AH: c.AH(), RemoteQKey: c.RemoteQKey()}
		if r.exchangesQPN() {
			var wc [1]gorxe.WC
			if _, err := w.poll(r.recvCQ, r.recvCh, wc[:], time.Time{}); err != nil {
				return nil, errors.Join(err, c.Close())
			}
			if wc[0].Status != gorxe.WCSuccess || wc[0].Opcode != gorxe.WCRecv || wc[0].WCFlags&gorxe.WCFlagWithImm == 0 {
				return nil, errors.Join(fmt.Errorf("bad completion of the client's QPN: status %v, opcode %v", wc[0].Status, wc[0].Opcode), c.Close())
			}
			dst.RemoteQPN = wc[0].ImmData
		}
		r.ud = append(r.ud, dst)
		return c, nil
	}
	var c *rdmacm.UDConn
	for try := 1; ; try++ {
		var err error
		c, err = rdmacm.DialUD(stepCtx, r.dev, r.cm.server, o)
		if err == nil {
			break
		}
		if try == cmConnectTries || !errors.Is(err, &cm.SIDRError{Status: mad.SIDRUnsupported}) {
			return nil, err
		}
		select {
		case <-time.After(cmRetryDelay):
		case <-stepCtx.Done():
			return nil, stepCtx.Err()
		}
	}
	dst := gorxe.UDInfo{AH: c.AH(), RemoteQPN: c.RemoteQPN(), RemoteQKey: c.RemoteQKey()}
	r.ud = append(r.ud, dst)
	if r.exchangesQPN() {
		if err := r.sendQPN(&w, c, dst, area); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	return c, nil
}

// sendQPN sends the QP's number to the server as immediate data and waits for the completion.
func (r *rdma) sendQPN(w *waiter, c *rdmacm.UDConn, dst gorxe.UDInfo, area uint64) error {
	wr := [1]gorxe.SendWR{{Opcode: gorxe.WRSendWithImm, Flags: gorxe.SendSignaled, ImmData: c.QP().QPN(), UD: dst,
		SGList: []gorxe.SGE{{Addr: area, Length: 4, LKey: r.mr.LKey()}}}}
	if err := c.QP().PostSend(wr[:]); err != nil {
		return fmt.Errorf("posting the QPN for the server: %w", err)
	}
	var wc [1]gorxe.WC
	if _, err := w.poll(r.sendCQ, r.sendCh, wc[:], time.Time{}); err != nil {
		return err
	}
	if wc[0].Status != gorxe.WCSuccess {
		return fmt.Errorf("bad completion of the QPN for the server: status %v", wc[0].Status)
	}
	return nil
}

// closeUDConns destroys the QPs and address handles of a UD test: UD has no connection to end.
func (r *rdma) closeUDConns() error {
	var errs []error
	for _, c := range r.udConns {
		errs = append(errs, c.Close())
	}
	r.udConns, r.qps, r.ud = nil, nil, nil
	return errors.Join(errs...)
}
