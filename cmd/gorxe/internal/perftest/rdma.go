package perftest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cm/rdmacm"
)

// negotiated are the settings both sides agree on during the exchange.
type negotiated struct {
	mtu         gorxe.MTU
	cycleBuffer int // perftest's cycle buffer: the page size, the larger of both sides'
	cacheLine   int
}

// plane is the RDMA side of a run. The out-of-band flow drives it through these steps, which
// keeps the flow testable against recorded peers without any RDMA.
type plane interface {
	// setup creates buffers and QPs and returns each QP's address for the peer.
	setup(n *negotiated) ([]Dest, info, error)
	// connect brings every QP up towards the peer's (perftest's ctx_connect).
	connect(remote []Dest) error
	// cmConnect creates and connects the QPs through RDMA-CM (-R), after a setup that made none,
	// and returns their addresses for the peer.
	cmConnect(ctx context.Context) ([]Dest, error)
	// postRecvs posts the receive buffers of a SEND test for messages of size bytes.
	postRecvs(size int) error
	// bw runs one bandwidth measurement: the requester's side, or the receiver's in send_bw.
	bw(ctx context.Context, size int) (Report, error)
	// lat runs one latency measurement.
	lat(ctx context.Context, size int) (latResult, error)
	// close releases everything setup made.
	close() error
}

// latResult is what a latency run measured: the start time of every iteration, or for a timed
// run the number of iterations in the sampled window and its length.
type latResult struct {
	starts  []int64
	iters   int
	elapsed time.Duration
}

// udStallTimeout bounds the wait of the receiver of an unreliable SEND test, where lost messages
// never arrive: it reports what it received once the sender has been quiet this long.
const udStallTimeout = 5 * time.Second

// errStalled: nothing happened for the stall limit.
var errStalled = errors.New("no progress")

// slowestRate is the transfer rate below which a run counts as stalled: a message of size bytes
// may take size/slowestRate longer than --timeout to complete.
const slowestRate = 1 << 20 // bytes per second

// stall is how long a run with messages of size bytes waits without any progress before it gives
// up on the peer: the --timeout of the run plus the time one message takes at slowestRate, or
// practically forever with --timeout=0.
func (r *rdma) stall(size int) time.Duration {
	if r.p.Timeout <= 0 {
		return 1 << 62
	}
	return r.p.Timeout + time.Duration(size)*time.Second/slowestRate
}

// requesterStall is stall for a bandwidth client waiting for the completions of its own work
// requests. On RC it also waits as long as its QPs may still be resending a packet the peer left
// unanswered, read from their own ACK timeout and retry count (set from -u, or by RDMA-CM):
// perftest has no watchdog and leaves the verdict to the QP's retry count, and this one does not
// speak before the QP would complete with RETRY_EXC_ERR (up to 34 s at -u 18, where --timeout
// alone once ended a READ run under loss between two retransmissions).
func (r *rdma) requesterStall(size int) time.Duration {
	s := r.stall(size)
	if r.p.Timeout <= 0 || r.p.Conn != RC {
		return s
	}
	var span time.Duration
	for _, q := range r.qps {
		if a, _, err := q.Query(); err == nil {
			span = max(span, gorxe.RetrySpan(a.Timeout, a.RetryCnt))
		}
	}
	return s + span
}

// rdma is the plane of a real run on a gorxe device.
type rdma struct {
	p    *Params
	dev  *gorxe.Device
	neg  negotiated
	warn func(string) // prints a notice on the error stream

	pd  *gorxe.PD
	buf *gorxe.Buffer
	mem []byte
	mr  *gorxe.MR
	// mrAddr and lkey are mr's address and local key, read once as perftest reads ibv_mr's
	// fields: the region's accessors take its lock, which on the poster's goroutine cost ~3% of
	// send_bw's CPU time when called for every message.
	mrAddr         uint64
	lkey           uint32
	sendCh, recvCh *gorxe.CompChannel
	sendCQ, recvCQ *cqSet
	qps            []*gorxe.QP
	ahs            []*gorxe.AH
	// ud is, per QP of a UD test, where its messages go: the AH, QPN and Q_Key of the peer's QP.
	ud            []gorxe.UDInfo
	local, remote []Dest
	gid           gorxe.GID
	gidIndex      int
	caps          gorxe.QPCap // of every QP
	// cm is where -R's RDMA-CM connections go; conns are those connections, whose QPs are qps.
	cm          *cmEndpoint
	conns       []*rdmacm.Conn
	udConns     []*rdmacm.UDConn // -R -c UD: the QPs found through SIDR
	outReads    int
	area        int // bytes per QP and direction in the buffer (perftest's BUFF_SIZE)
	maxRdAtomic int

	// rposted counts the receives posted per QP for the current size; rnext is the next receive
	// slot in the cycle buffer.
	rposted, rnext []int
	// rwrs and rsges are postRecvN's scratch.
	rwrs  [pollBatch]gorxe.RecvWR
	rsges [pollBatch]gorxe.SGE
}

// newRDMA returns the plane of a run on dev; warn prints its notices. cm is where -R connects
// its QPs (nil without -R).
func newRDMA(p *Params, dev *gorxe.Device, cm *cmEndpoint, warn func(string)) *rdma {
	return &rdma{p: p, dev: dev, cm: cm, warn: warn}
}

// portMTU returns the MTU the run asks for before the exchange (perftest's set_mtu): -m if the
// port allows it, otherwise the port's active MTU, with perftest's notices.
func portMTU(p *Params, dev *gorxe.Device, notice func(string)) (gorxe.MTU, error) {
	pa, err := dev.QueryPort(1)
	if err != nil {
		return 0, err
	}
	if p.MTU == 0 {
		return pa.ActiveMTU, nil
	}
	m := gorxe.MTUFromBytes(p.MTU)
	if m.Bytes() != p.MTU {
		notice(fmt.Sprintf(" Invalid MTU - %d \n Please choose mtu from {256,512,1024,2048,4096}\n Will run with the port active mtu - %d", p.MTU, pa.ActiveMTU))
		return pa.ActiveMTU, nil
	}
	if m > pa.ActiveMTU {
		notice(fmt.Sprintf("Requested mtu is higher than active mtu \nChanging to active mtu - %d", pa.ActiveMTU))
		return pa.ActiveMTU, nil
	}
	return m, nil
}

func (r *rdma) setup(n *negotiated) ([]Dest, info, error) {
	p := r.p
	r.neg = *n
	attr, err := r.dev.Query()
	if err != nil {
		return nil, info{}, err
	}
	if r.gidIndex, err = chooseGID(r.dev, p.GIDIndex, p.IPv6); err != nil {
		return nil, info{}, err
	}
	gid, err := r.dev.QueryGID(r.gidIndex)
	if err != nil {
		return nil, info{}, err
	}
	r.outReads = 1
	r.maxRdAtomic = attr.MaxQPRdAtom
	if p.Test.Verb == VerbRead || p.Test.Verb == VerbAtomic {
		r.outReads = attr.MaxQPRdAtom
		if p.OutReads > attr.MaxQPRdAtom {
			r.warn(fmt.Sprintf(" Number of outstanding reads is above max = %d\n Changing to that max value", attr.MaxQPRdAtom))
		} else if p.OutReads > 0 {
			r.outReads = p.OutReads
		}
	}
	if p.Inline > attr.MaxInlineData {
		return nil, info{}, fmt.Errorf("inline size %d exceeds the device's maximum of %d", p.Inline, attr.MaxInlineData)
	}

	// The buffer holds, per QP, an area the QP sends from and an area the peer targets, each at
	// least a cycle buffer long, as perftest lays its buffer out; a UD receive also needs room
	// for the GRH in front of the message.
	msg := roundUp(p.bufSize(), n.cacheLine) + n.cacheLine
	r.area = roundUp(max(n.cycleBuffer+n.cacheLine, msg), n.cycleBuffer)
	if r.buf, err = gorxe.AllocBuffer(2*p.NumQPs*r.area, gorxe.BufferOptions{HugePages: p.HugePages}); err != nil {
		return nil, info{}, err
	}
	r.mem = r.buf.Bytes()
	if r.pd, err = r.dev.AllocPD(); err != nil {
		return nil, info{}, err
	}
	if r.mr, err = r.pd.RegMR(r.mem, mrAccess(p.Test)); err != nil {
		return nil, info{}, err
	}
	r.mrAddr, r.lkey = r.mr.Addr(), r.mr.LKey()
	if r.sendCh, err = r.dev.CreateCompChannel(); err != nil {
		return nil, info{}, err
	}
	if r.recvCh, err = r.dev.CreateCompChannel(); err != nil {
		return nil, info{}, err
	}
	sendDepth, recvDepth := p.TxDepth, 1
	if p.Test.Verb == VerbSend {
		recvDepth = p.RxDepth
	}
	if r.sendCQ, err = newCQSet(r.dev, p.NumQPs, sendDepth, r.sendCh); err != nil {
		return nil, info{}, err
	}
	if r.recvCQ, err = newCQSet(r.dev, p.NumQPs, recvDepth, r.recvCh); err != nil {
		return nil, info{}, err
	}
	r.gid = gid
	r.caps = gorxe.QPCap{MaxSendWR: sendDepth, MaxRecvWR: recvDepth, MaxSendSGE: 1, MaxRecvSGE: 1, MaxInlineData: p.Inline}
	r.rposted, r.rnext = make([]int, p.NumQPs), make([]int, p.NumQPs)
	in := info{device: r.dev.Name(), mtuBytes: n.mtu.Bytes(), gidIndex: r.gidIndex, outReads: r.outReads}
	if p.RDMACM {
		return nil, in, nil // cmConnect creates the QPs
	}
	typ := map[ConnType]gorxe.QPType{RC: gorxe.QPTypeRC, UC: gorxe.QPTypeUC, UD: gorxe.QPTypeUD}[p.Conn]
	for i := range p.NumQPs {
		q, err := r.dev.CreateQP(r.pd, &gorxe.QPInitAttr{SendCQ: r.sendCQ.of(i), RecvCQ: r.recvCQ.of(i), QPType: typ, Cap: r.caps})
		if err != nil {
			return nil, info{}, err
		}
		r.qps = append(r.qps, q)
		if err := r.toInit(q); err != nil {
			return nil, info{}, err
		}
	}
	r.setLocal()
	return r.local, in, nil
}

// setLocal fills the addresses of the QPs for the peer (perftest's set_up_connection). The PSN is
// random as perftest's; over RDMA-CM it is only shown, since the CM chose the QPs' PSNs.
func (r *rdma) setLocal() {
	r.local = make([]Dest, len(r.qps))
	for i, q := range r.qps {
		r.local[i] = Dest{
			OutReads: r.outReads,
			QPN:      q.QPN(),
			PSN:      rand.Uint32() & 0xffffff,
			RKey:     advertisedRKey(r.mr),
			VAddr:    r.mr.Addr() + uint64((r.p.NumQPs+i)*r.area),
			GID:      r.gid,
			GIDIndex: r.gidIndex,
		}
	}
}

// mrAccess returns the rights perftest registers its buffer with for test t.
func mrAccess(t Test) gorxe.Access {
	a := gorxe.AccessLocalWrite
	switch t.Verb {
	case VerbWrite:
		a |= gorxe.AccessRemoteWrite
	case VerbRead:
		a |= gorxe.AccessRemoteRead
	case VerbAtomic:
		a |= gorxe.AccessRemoteAtomic
	}
	return a
}

// advertisedRKey is the rkey a key message carries: rxe reports 0 for a region without remote
// rights (SEND tests), and so does gorxe, so that both print the same.
func advertisedRKey(m *gorxe.MR) uint32 {
	if m.Access()&(gorxe.AccessRemoteWrite|gorxe.AccessRemoteRead|gorxe.AccessRemoteAtomic) == 0 {
		return 0
	}
	return m.RKey()
}

// chooseGID returns the GID index of the run: -x when given, otherwise perftest's choice
// (get_best_gid_index): the first IPv4-mapped GID, or with --ipv6 the first other one.
func chooseGID(d *gorxe.Device, want int, ipv6 bool) (int, error) {
	table := d.GIDTable()
	if want >= 0 {
		if want >= len(table) || !table[want].Usable {
			return 0, fmt.Errorf("GID index %d is not usable on %s (%d entries): %w", want, d.Name(), len(table), gorxe.ErrInvalidGIDIndex)
		}
		return want, nil
	}
	for _, e := range table {
		if e.Usable && e.GID.Addr().Is4() != ipv6 {
			return e.Index, nil
		}
	}
	for _, e := range table {
		if e.Usable {
			return e.Index, nil
		}
	}
	return 0, fmt.Errorf("%s has no usable GID: %w", d.Name(), gorxe.ErrInvalidGIDIndex)
}

// toInit moves a new QP to INIT with perftest's access rights.
func (r *rdma) toInit(q *gorxe.QP) error {
	a := gorxe.QPAttr{State: gorxe.QPStateInit, PortNum: 1}
	mask := gorxe.QPAttrState | gorxe.QPAttrPKeyIndex | gorxe.QPAttrPort
	if r.p.Conn == UD {
		a.QKey = defQKey
		mask |= gorxe.QPAttrQKey
	} else {
		switch r.p.Test.Verb {
		case VerbAtomic:
			a.AccessFlags = gorxe.AccessRemoteAtomic
		case VerbRead:
			a.AccessFlags = gorxe.AccessRemoteRead
		case VerbWrite:
			a.AccessFlags = gorxe.AccessRemoteWrite
		case VerbSend:
			a.AccessFlags = gorxe.AccessRemoteWrite | gorxe.AccessLocalWrite
		}
		mask |= gorxe.QPAttrAccessFlags
	}
	return q.Modify(&a, mask)
}

// sameFamily is perftest's ctx_check_gid_compatibility: both GIDs IPv4-mapped, or neither.
func sameFamily(a, b gorxe.GID) bool { return a.Addr().Is4() == b.Addr().Is4() }

func (r *rdma) connect(remote []Dest) error {
	p := r.p
	r.remote = remote
	if p.RDMACM {
		return nil // RDMA-CM connected the QPs
	}
	for i, q := range r.qps {
		d := &remote[i]
		av := gorxe.AHAttr{
			IsGlobal: true, SL: uint8(p.SL), PortNum: 1,
			GRH: gorxe.GlobalRoute{DGID: d.GID, SGIDIndex: uint8(r.gidIndex), HopLimit: hopLimit, TrafficClass: uint8(p.TClass)},
		}
		a := gorxe.QPAttr{State: gorxe.QPStateRTR}
		mask := gorxe.QPAttrState
		if p.Conn != UD {
			a.AHAttr, a.PathMTU, a.DestQPNum, a.RQPSN = av, r.neg.mtu, d.QPN, d.PSN
			mask |= gorxe.QPAttrAV | gorxe.QPAttrPathMTU | gorxe.QPAttrDestQPN | gorxe.QPAttrRQPSN
			if p.Conn == RC {
				a.MaxDestRdAtomic, a.MinRNRTimer = uint8(min(r.outReads, 255)), minRNRTimer
				mask |= gorxe.QPAttrMaxDestRdAtomic | gorxe.QPAttrMinRNRTimer
			}
		}
		if err := q.Modify(&a, mask); err != nil {
			return stepErr(err, "Failed to modify QP %d to RTR", q.QPN())
		}
		// The passive side of a bandwidth test only receives: perftest leaves its QPs in RTR.
		if p.Test.Kind == Lat || !p.IsServer() {
			a = gorxe.QPAttr{State: gorxe.QPStateRTS, SQPSN: r.local[i].PSN}
			mask = gorxe.QPAttrState | gorxe.QPAttrSQPSN
			if p.Conn == RC {
				a.Timeout, a.RetryCnt, a.RNRRetry = uint8(p.QPTimeout), retryCount, rnrRetry
				a.MaxRdAtomic = uint8(min(d.OutReads, r.maxRdAtomic, 255))
				mask |= gorxe.QPAttrTimeout | gorxe.QPAttrRetryCnt | gorxe.QPAttrRNRRetry | gorxe.QPAttrMaxQPRdAtomic
			}
			if err := q.Modify(&a, mask); err != nil {
				return stepErr(err, "Failed to modify QP to RTS")
			}
			if p.Conn == UD {
				ah, err := r.pd.CreateAH(&av)
				if err != nil {
					return stepErr(err, "Failed to create AH")
				}
				r.ahs = append(r.ahs, ah)
				r.ud = append(r.ud, gorxe.UDInfo{AH: ah, RemoteQPN: d.QPN, RemoteQKey: defQKey})
			}
		}
	}
	return nil
}

func (r *rdma) close() error {
	var errs []error
	for _, ah := range r.ahs {
		errs = append(errs, ah.Destroy())
	}
	switch {
	case r.conns != nil:
		errs = append(errs, r.closeConns())
	case r.udConns != nil:
		errs = append(errs, r.closeUDConns())
	default:
		for _, q := range r.qps {
			errs = append(errs, q.Destroy())
		}
	}
	for _, s := range []*cqSet{r.sendCQ, r.recvCQ} {
		if s != nil {
			errs = append(errs, s.destroy())
		}
	}
	for _, ch := range []*gorxe.CompChannel{r.sendCh, r.recvCh} {
		if ch != nil {
			errs = append(errs, ch.Destroy())
		}
	}
	if r.mr != nil {
		errs = append(errs, r.mr.Dereg())
	}
	if r.pd != nil {
		errs = append(errs, r.pd.Dealloc())
	}
	if r.buf != nil {
		errs = append(errs, r.buf.Free())
	}
	return errors.Join(errs...)
}

// roundUp rounds n up to a multiple of m.
func roundUp(n, m int) int { return (n + m - 1) / m * m }

// cycle is how perftest spreads the messages of a bandwidth test over the buffer
// (increase_loc_addr / increase_rem_addr): message k of a QP goes to offset (k mod slots) * step,
// so that consecutive messages touch different cache lines, and all of them stay within one cycle
// buffer of the area's start. Messages larger than half a cycle buffer all use offset 0.
type cycle struct {
	step, slots int
}

func newCycle(size, cycleBuffer, cacheLine int) cycle {
	if size > cycleBuffer/2 {
		return cycle{step: 0, slots: 1}
	}
	step := max(roundUp(size, cacheLine), cacheLine)
	return cycle{step: step, slots: max(cycleBuffer/step, 1)}
}

func (c cycle) offset(k int) int { return k % c.slots * c.step }
