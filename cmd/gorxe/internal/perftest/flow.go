package perftest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// flow drives one side of a test the way perftest's main functions do: the version, system-data
// and MTU exchanges, then key exchanges and barriers at exactly the points perftest places them,
// so that the two sides' messages pair up whichever implementation runs on the other side.
type flow struct {
	p     *Params
	x     *session
	s     Stream
	pl    plane
	out   io.Writer
	warn  func(string)
	full  bool // the complete output, not a single --output number
	local []Dest
	// in describes this side's device and path for the header and the --out_json file.
	in info
	// remote holds the peer's addresses from the latest round of key exchanges.
	remote []Dest
	// cycleBuffer is this side's page size, which perftest sizes its buffers by.
	cycleBuffer int
	// belowLimit records a -w/-y limit the client's result missed.
	belowLimit string
}

// run runs the test. mtu is the MTU this side asks for; the smaller of both sides' is used.
func (f *flow) run(ctx context.Context, mtu gorxe.MTU) error {
	p := f.p
	neg := negotiated{mtu: mtu, cycleBuffer: f.cycleBuffer, cacheLine: defCacheLine}
	f.s.SetTimeout(p.Timeout)
	if !p.DontXchgVersions {
		if _, err := f.x.versions(); err != nil {
			return err
		}
		f.s.ExplainClose(peerStopped)
		cb, cl, err := f.x.sysData(int32(neg.cycleBuffer), int32(neg.cacheLine))
		if err != nil {
			return err
		}
		if cb <= 0 || cl <= 0 || cb > 1<<24 || cl > 1<<12 || cb%cl != 0 {
			return fmt.Errorf("%w: peer's page size %d and cache line size %d make no sense", ErrBadMessage, cb, cl)
		}
		neg.cycleBuffer, neg.cacheLine = int(cb), int(cl)
		if neg.mtu, err = f.x.mtu(mtu); err != nil {
			return err
		}
	}
	if p.Conn == UD && (p.All || p.Size > neg.mtu.Bytes()) {
		if p.sizeSet && !p.All {
			return fmt.Errorf("a UD message cannot be larger than the MTU: -s %d > %d", p.Size, neg.mtu.Bytes())
		}
		f.warn(fmt.Sprintf(" Max msg size in UD is MTU %d\n Changing to this MTU", neg.mtu.Bytes()))
		p.Size = neg.mtu.Bytes()
	}

	var err error
	if f.local, f.in, err = f.pl.setup(&neg); err != nil {
		return err
	}
	if p.RDMACM {
		if f.local, err = f.cmConnect(ctx); err != nil {
			return err
		}
	}
	f.remote = make([]Dest, len(f.local))
	if f.full {
		writeHeader(f.out, p, f.in)
	}
	switch {
	case p.Test.Kind == BW && p.Test.Verb == VerbSend:
		return f.sendBW(ctx)
	case p.Test.Kind == BW:
		return f.rdmaBW(ctx)
	case p.Test.Verb == VerbSend:
		return f.sendLat(ctx)
	case p.Test.Verb == VerbWrite:
		return f.writeLat(ctx)
	default:
		return f.readLat(ctx)
	}
}

// keys exchanges one key message per QP; with print the peer's addresses are shown.
func (f *flow) keys(print bool) error {
	for i := range f.local {
		d, err := f.x.handShake(&f.local[i])
		if err != nil {
			return err
		}
		// With --dont_xchg_versions, a well-formed key message is the first proof of a perftest peer.
		f.s.ExplainClose(peerStopped)
		f.remote[i] = d
		if print && f.full {
			writeDest(f.out, "remote", f.p.Test.Verb, &d)
		}
	}
	return nil
}

// sync is a barrier: one key exchange on the first QP.
func (f *flow) sync() error {
	_, err := f.x.handShake(&f.local[0])
	return err
}

// connect checks that both sides use the same IP family and brings the QPs up. With -R the QPs
// are up already, and perftest checks nothing: RDMA-CM chose the addresses.
func (f *flow) connect() error {
	if !f.p.RDMACM && !sameFamily(f.local[0].GID, f.remote[0].GID) {
		return fmt.Errorf("incompatible GID types: local %s, remote %s (use the same IP version on both sides)",
			f.local[0].GID.Addr(), f.remote[0].GID.Addr())
	}
	return f.pl.connect(f.remote)
}

func (f *flow) printLocal() {
	if f.full {
		for i := range f.local {
			writeDest(f.out, "local", f.p.Test.Verb, &f.local[i])
		}
	}
}

func (f *flow) line() {
	if f.full {
		io.WriteString(f.out, resultLine)
	}
}

func (f *flow) resultHeader() {
	if f.full {
		writeResultHeader(f.out, f.p)
	}
}

// unbounded lifts the per-step limit of the exchange for the rest of the run: from now on a side
// may wait for as long as the other side's measurement takes. A peer that fails closes the
// connection, which ends the wait.
func (f *flow) unbounded() { f.s.SetTimeout(0) }

// rdmaBW is ib_write_bw, ib_read_bw and ib_atomic_bw: the client measures, the server only
// serves, then receives and prints the client's report.
func (f *flow) rdmaBW(ctx context.Context) error {
	if err := f.keys(false); err != nil {
		return err
	}
	if err := f.connect(); err != nil {
		return err
	}
	f.printLocal()
	if err := f.keys(true); err != nil {
		return err
	}
	if err := f.sync(); err != nil {
		return err
	}
	f.resultHeader()
	f.unbounded()
	if f.p.IsServer() {
		if err := f.sync(); err != nil {
			return err
		}
		rem, err := f.x.reports(&Report{})
		if err != nil {
			return err
		}
		f.printBW(&rem)
		if err := f.x.closeConnection(&f.local[0]); err != nil {
			return err
		}
		f.line()
		return nil
	}
	var rep Report
	for _, size := range f.p.sizes() {
		var err error
		if rep, err = f.measureBW(ctx, size); err != nil {
			return err
		}
		f.printBW(&rep)
		f.checkLimits(&rep)
	}
	f.line()
	if err := f.sync(); err != nil {
		return err
	}
	if _, err := f.x.reports(&rep); err != nil {
		return err
	}
	return f.x.closeConnection(&f.local[0])
}

// sendPrefix is the exchange ib_send_bw and ib_send_lat begin with: keys, connect, a barrier,
// keys again, then the result header; the measurement after it may take as long as it takes.
func (f *flow) sendPrefix() error {
	if err := f.keys(false); err != nil {
		return err
	}
	if err := f.connect(); err != nil {
		return err
	}
	if err := f.sync(); err != nil {
		return err
	}
	f.printLocal()
	if err := f.keys(true); err != nil {
		return err
	}
	f.resultHeader()
	f.unbounded()
	return nil
}

// sendBW is ib_send_bw: both sides measure, the client sending and the server receiving, and
// each prints its own result.
func (f *flow) sendBW(ctx context.Context) error {
	if err := f.sendPrefix(); err != nil {
		return err
	}
	for _, size := range f.p.sizes() {
		if f.p.IsServer() {
			if err := f.pl.postRecvs(size); err != nil {
				return err
			}
		}
		if err := f.sync(); err != nil {
			return err
		}
		rep, err := f.measureBW(ctx, size)
		if err != nil {
			return err
		}
		f.printBW(&rep)
		if !f.p.IsServer() {
			f.checkLimits(&rep)
		}
		if f.p.All {
			if err := f.sync(); err != nil {
				return err
			}
		}
	}
	f.line()
	return f.x.closeConnection(&f.local[0])
}

// latPrefix is the setup of ib_write_lat, ib_read_lat and ib_atomic_lat.
func (f *flow) latPrefix() error {
	if err := f.sync(); err != nil {
		return err
	}
	if err := f.keys(false); err != nil {
		return err
	}
	if err := f.connect(); err != nil {
		return err
	}
	f.printLocal()
	if err := f.keys(true); err != nil {
		return err
	}
	return f.sync()
}

// writeLat is ib_write_lat: both sides take part and print. perftest ends it without a final
// exchange: each side stops after its last iteration.
func (f *flow) writeLat(ctx context.Context) error {
	if err := f.latPrefix(); err != nil {
		return err
	}
	f.resultHeader()
	for _, size := range f.p.sizes() {
		if err := f.measureLat(ctx, size, 2); err != nil {
			return err
		}
	}
	f.line()
	return nil
}

// readLat is ib_read_lat and ib_atomic_lat: the client measures; the server waits for it to
// finish.
func (f *flow) readLat(ctx context.Context) error {
	if err := f.latPrefix(); err != nil {
		return err
	}
	f.unbounded()
	if f.p.IsServer() {
		if err := f.x.closeConnection(&f.local[0]); err != nil {
			return err
		}
		f.line()
		return nil
	}
	f.resultHeader()
	for _, size := range f.p.sizes() {
		if err := f.measureLat(ctx, size, 1); err != nil {
			return err
		}
	}
	if err := f.x.closeConnection(&f.local[0]); err != nil {
		return err
	}
	f.line()
	return nil
}

// sendLat is ib_send_lat: both sides take part and print.
func (f *flow) sendLat(ctx context.Context) error {
	if err := f.sendPrefix(); err != nil {
		return err
	}
	for _, size := range f.p.sizes() {
		if err := f.pl.postRecvs(size); err != nil {
			return err
		}
		if err := f.sync(); err != nil {
			return err
		}
		if err := f.measureLat(ctx, size, 2); err != nil {
			return err
		}
	}
	f.line()
	return f.x.closeConnection(&f.local[0])
}

// measureBW runs one bandwidth measurement. An interrupted one prints the result of what it
// completed before it fails, as a line of its own table.
func (f *flow) measureBW(ctx context.Context, size int) (Report, error) {
	rep, err := f.pl.bw(ctx, size)
	if errors.Is(err, tool.ErrInterrupted) && rep.Iters > 0 {
		f.printBW(&rep)
		f.line()
	}
	return rep, err
}

// measureLat runs and prints one latency measurement; an interrupted one prints the iterations it
// completed. rtt is as for printLat.
func (f *flow) measureLat(ctx context.Context, size, rtt int) error {
	res, err := f.pl.lat(ctx, size)
	switch {
	case err == nil:
		f.printLat(size, &res, rtt)
	case errors.Is(err, tool.ErrInterrupted) && res.iters > 0:
		f.printLat(size, &res, rtt)
		f.line()
	}
	return err
}

// printBW prints one bandwidth result and saves it for --out_json.
func (f *flow) printBW(r *Report) {
	writeBW(f.out, f.p, r)
	f.saveJSON(bwJSON(f.p, r))
}

// printLat prints one latency result, and saves it for --out_json; rtt is 2 for ping-pong tests,
// which time round trips.
func (f *flow) printLat(size int, res *latResult, rtt int) {
	if res.starts == nil {
		writeLatDuration(f.out, f.p, size, res.iters, res.elapsed, rtt)
		f.saveJSON(latDurationJSON(f.p, size, res.iters, res.elapsed, rtt))
		return
	}
	st, unsorted, sorted := latReport(res.starts, rtt)
	if f.full && (f.p.Unsorted || f.p.Histogram) {
		if f.p.Unsorted {
			writeSamples(f.out, unsorted)
		}
		if f.p.Histogram {
			writeSamples(f.out, sorted)
		}
		writeResultHeader(f.out, f.p)
	}
	writeLat(f.out, f.p, size, res.iters, &st)
	f.saveJSON(latJSON(f.p, size, res.iters, &st))
}

// checkLimits compares a client's result with -w and -y.
func (f *flow) checkLimits(r *Report) {
	switch {
	case f.p.LimitBW > 0 && r.BWAvg < f.p.LimitBW:
		f.belowLimit = "BW result is below bw limit"
	case f.p.LimitMsgRate > 0 && r.MsgRate < f.p.LimitMsgRate:
		f.belowLimit = "Msg rate  is below msg_rate limit"
	}
}

// lingerAfter is how long a side keeps its device after a test that ends without a final
// exchange (ib_write_lat), so that the acknowledgement of the peer's last message still leaves.
const lingerAfter = 100 * time.Millisecond
