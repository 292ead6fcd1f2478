// Package faultnote tells the user of a tool that GORXE_FAULTS impairs its traffic on purpose, and
// at the end what that cost: the datagrams the faults dropped and the recovery they caused.
package faultnote

import (
	"fmt"
	"sync/atomic"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/netio"
)

// Note watches one device whose traffic GORXE_FAULTS impairs.
type Note struct {
	cfg  netio.FaultConfig
	lost atomic.Uint64
}

// FromEnv returns a Note for the fault configuration in the environment getenv reads, or nil
// when it asks for no fault (unset or empty). A malformed value is an error, as it is to the
// device.
func FromEnv(getenv func(string) string) (*Note, error) {
	cfg, err := netio.ParseFaultConfig(getenv(netio.EnvFaults))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", netio.EnvFaults, err)
	}
	if !cfg.Enabled() {
		return nil, nil
	}
	return &Note{cfg: cfg}, nil
}

// Banner is the one line that says the faults are on, before a run: its results measure the
// faults as much as the stack.
func (n *Note) Banner() string {
	return fmt.Sprintf("%s=%s: this side impairs its outgoing datagrams on purpose", netio.EnvFaults, n.cfg)
}

// Tap counts the datagrams the faults drop; it is the device's Config.Tap.
func (n *Note) Tap(dir netio.Direction, _ *netio.Message) {
	if dir == netio.Lost {
		n.lost.Add(1)
	}
}

// Summary is the one line that says, after a run, what the faults did to this side: the
// datagrams they dropped out of those sent, the retransmissions this side started
// (completer_retry_err) and the duplicate and out-of-sequence requests it received, which is how
// the peer's recovery shows, and the received packets it dropped.
func (n *Note) Summary(c counter.Snapshot) string {
	var dropped uint64
	for _, id := range receiveDrops {
		dropped += c.Get(id)
	}
	return fmt.Sprintf("%s: %d of %d datagrams dropped by the faults; %d retransmissions, %d duplicate and %d out-of-sequence requests received, %d received packets dropped",
		netio.EnvFaults, n.lost.Load(), c.Get(counter.SentPkts), c.Get(counter.CompleterRetryErr),
		c.Get(counter.DuplicateRequest), c.Get(counter.OutOfSeqRequest), dropped)
}

// receiveDrops are the counters of received packets the device dropped.
var receiveDrops = [...]counter.ID{
	counter.RcvdMalformed, counter.RcvdICRCErr, counter.RcvdBadPKey, counter.RcvdUnknownQPN,
	counter.RcvdNoMcastGroup, counter.RcvdWrongPath, counter.RcvdWrongState, counter.RcvdBadOpcode,
	counter.RcvdBadAccess, counter.RcvdBusy, counter.QKeyViolation, counter.RcvdNoRecvWQE,
	counter.RcvdTooLong, counter.RcvdUnexpected, counter.RcvdNetErr,
}
