package gorxe

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/gorxe/gorxe/counter"
	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/internal/netdev"
	"github.com/gorxe/gorxe/internal/stack"
	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
	"github.com/gorxe/gorxe/transport"
)

// Device is an opened gorxe device (ibv_context): one RoCEv2 port bound to local addresses,
// the verbs objects created on it, and the goroutines that run their traffic.
//
// Traffic runs on a fixed set of workers, each owning the QPs whose QPN maps to it, plus one
// receive goroutine per network connection, which runs the engines of the packets it reads
// itself when their worker is free; everything stops in Close. All methods are safe for
// concurrent use.
type Device struct {
	cfg  *resolved
	name string
	bind *netdev.Binding
	gids []GIDEntry // port 1's GID table
	mtu  MTU
	guid uint64
	keys *mr.Table
	log  *slog.Logger
	rt   *stack.Stack

	// life serialises Close against the verbs that create, change or destroy what the stack runs,
	// so that nothing is added after the workers flushed their QPs and stopped. The data path
	// does not take it: a post that sees closed unset still runs into a QP whose queue lock
	// orders it with Close's move to the error state, which happens under the same lock (a work
	// request queued before it is flushed by it, one queued after completes at once as flushed),
	// and a worker that has stopped runs nothing a post or a poll hands it. A write to closed
	// before Close returns is seen by every verb that starts afterwards.
	life   sync.RWMutex
	closed atomic.Bool
	// done is closed once Close has flushed every QP, ending blocking calls (GetAsyncEvent,
	// CompChannel.GetEvent, CQ.Wait) once they have handed out what was queued.
	done chan struct{}

	events eventQueue
	qpt    *qp.Table
}

// Open creates a device bound to cfg.Addr or to every address of cfg.Interface (like
// ibv_open_device on a freshly added rxe link). It fails with ErrAddrInUse (which matches
// syscall.EADDRINUSE too) if the UDP port is taken on any of the addresses.
func Open(cfg Config) (*Device, error) {
	rc, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	b, err := bindTo(rc)
	if err != nil {
		return nil, err
	}
	d := &Device{
		cfg:  rc,
		name: b.Name,
		bind: b,
		gids: gidEntries(b),
		mtu:  activeMTU(b.MTU),
		guid: b.NodeGUID(),
		keys: mr.NewTable(),
		done: make(chan struct{}),
	}
	if rc.Name != "" {
		d.name = rc.Name
	}
	// Every record the device and its runtime log names the device.
	d.log = rc.log.With("device", d.name)
	if rc.Network == nil && b.NetDev == "" {
		// The socket layer would refuse the address too, less clearly.
		return nil, &Error{Op: "open", Err: detailErr{ErrNoAddresses, fmt.Sprintf("%v is not an address of any local interface", rc.Addr)}}
	}
	if rc.MTU != 0 && rc.MTU < d.mtu {
		d.mtu = rc.MTU
	}
	conn, err := openConn(rc, d.log, b.Addrs, rc.Tap)
	if err != nil {
		return nil, err
	}
	env := transport.Env{Mem: d.keys, SourceAddr: d.sourceAddr, DstPort: rc.port, PortMTU: d.mtu}
	d.rt = stack.New(stack.Config{
		Conn: conn, Workers: rc.workers, Clock: rc.clk, Log: d.log, Strict: rc.Network != nil, BusyPoll: rc.BusyPoll,
		ReceivePoll: rc.ReceivePoll, Env: env,
	})
	d.events.init()
	lim := qp.DefaultLimits()
	lim.GIDTableLen = len(d.gids)
	lim.MaxPKeys = 1 // the P_Key table holds 0xFFFF only
	d.qpt = qp.NewTable(qp.Config{Limits: lim, Events: eventSink{d}, ResolveAH: resolveAH, Route: env.Route})
	d.events.push(AsyncEvent{Type: EventPortActive, Port: 1})
	d.log.Info("gorxe device open", "addrs", conn.LocalAddrs(), "mtu", d.mtu, "workers", d.rt.Workers())
	return d, nil
}

// openConn opens the device's datagram transport: UDP sockets on every bound address, or the
// supplied network, shown to the tap and wrapped in the fault injector when those are configured.
func openConn(rc *resolved, log *slog.Logger, addrs []netip.Addr, tap netio.TapFunc) (netio.Conn, error) {
	var c netio.Conn
	var err error
	if rc.Network != nil {
		c, err = rc.Network(addrs, rc.port)
	} else {
		// The UDP checksum stays on, unlike rxe's zero: Linux segments (GSO) only datagrams it
		// checksums, and a receiver accepts either. Segmented IPv4 datagrams carry IDs 0, 1, 2,
		// ..., which the ICRC covers, so each announced ID adjusts its packet's ICRC.
		c, err = netio.ListenUDP(netio.UDPConfig{Addrs: addrs, Port: rc.port, SetIPv4ID: adjustIPv4ID})
	}
	if errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, netio.ErrAddressInUse) {
		return nil, &Error{Op: "open", Err: alsoErr{ErrAddrInUse, err}}
	}
	if err != nil {
		return nil, &Error{Op: "open", Err: err}
	}
	if tap != nil && !rc.faults.Enabled() {
		c = netio.Tap(c, tap)
	}
	if rc.faults.Enabled() {
		fc, err := netio.WithFaults(c, rc.faults, rc.clk)
		if err != nil {
			c.Close()
			return nil, configErr("Faults: " + err.Error())
		}
		if tap != nil {
			// The injector shows the tap every datagram in wire order with its fate, losses in
			// their place among the survivors of a batch.
			fc.Observe(tap)
		}
		log.Info("gorxe fault injection on", "faults", rc.faults.String())
		c = fc
	}
	return c, nil
}

// pollNetwork runs what the network holds on the caller's goroutine (latency mode's CQ poll) and
// reports whether there was anything. Like a post it takes no lock: once Close has closed the
// network the poll reads nothing, and workers that have stopped run nothing it hands them.
// PollNetwork reads the datagrams that have already arrived, without waiting, and runs their
// engines on the calling goroutine; it reports whether it read any. CQ.Poll does this in latency
// mode when it finds its CQ empty; a consumer of a CQ ring (CreateCQOnRing), which polls without
// calling gorxe, may call it when its ring is empty to the same end: its packets become
// completions with no goroutine wake-up in between. It returns false at once while another
// caller polls the network.
func (d *Device) PollNetwork() bool { return d.pollNetwork() }

// SendHeldACKs sends at once the acknowledgements the device holds back: a poll that finds a
// message keeps its ACK to follow the application's reply, and sends it with the QP's next send,
// the next poll that finds nothing, any verb that changes a QP, Close, or within 50 µs on a
// timer. A program about to leave without any of those, right after its last poll (a C program
// returning from main, which the C library handles at exit), calls it first: the peer's last
// message has completed here, and without its ACK the peer retransmits to a process that is gone
// and fails it with WCRetryExcErr.
func (d *Device) SendHeldACKs() {
	if !d.closed.Load() {
		d.rt.SendKept()
	}
}

// NetworkFDs appends to dst the file descriptors of the sockets the device receives on, for a
// program that sleeps in a poll(2) of its own until the network or something else needs it and
// then calls PollNetwork, as the C library's ibv_get_cq_event does: the datagram then wakes the
// thread that will run it. None for a closed device or one on a Config.Network. The descriptors
// stay the device's: never read, write or close them; they change as multicast groups are joined
// and left, and close with the device (poll(2) then reports POLLNVAL).
func (d *Device) NetworkFDs(dst []int) []int {
	if d.closed.Load() {
		return dst
	}
	return d.rt.ReadableFDs(dst)
}

func (d *Device) pollNetwork() bool {
	return !d.closed.Load() && d.rt.Poll()
}

// check returns ErrDeviceClosed, wrapped for verb op, once Close has started.
func (d *Device) check(op string) error {
	if d.closed.Load() {
		return &Error{Op: op, Err: ErrDeviceClosed}
	}
	return nil
}

// Close releases the device (ibv_close_device): it stops receiving, moves every QP to the error
// state so that outstanding work requests complete with WCWRFlushErr, stops the timers and the
// goroutines, and closes the sockets, which releases every object of the device. Afterwards CQs
// can still be polled, CompChannel.GetEvent and GetAsyncEvent hand out the events still queued
// (then fail with ErrDeviceClosed), CQ.AckEvents acknowledges those events, and accessors (QPN,
// LKey, ...) still answer; every other verb, Destroy, Dereg and Dealloc included, returns
// ErrDeviceClosed.
func (d *Device) Close() error {
	d.life.Lock()
	if d.closed.Swap(true) {
		d.life.Unlock()
		return &Error{Op: "close_device", Err: ErrDeviceClosed}
	}
	d.life.Unlock()

	err := d.rt.Close()
	close(d.done)
	d.log.Info("gorxe device closed")
	if err != nil {
		return &Error{Op: "close_device", Err: err}
	}
	return nil
}

// Name returns the device name (ibv_get_device_name), "gorxe_" plus the interface name or the
// address unless Config.Name chose one.
func (d *Device) Name() string { return d.name }

// NetDev returns the name of the network interface the device is bound to, or "" when its
// address belongs to no local interface (a supplied network).
func (d *Device) NetDev() string { return d.bind.NetDev }

// LocalAddrs returns the addresses and UDP port the device listens on.
func (d *Device) LocalAddrs() []netip.AddrPort { return d.rt.LocalAddrs() }

// Query returns the device attributes (ibv_query_device), rxe's defaults with this device's
// GUIDs.
func (d *Device) Query() (DeviceAttr, error) {
	if err := d.check("query_device"); err != nil {
		return DeviceAttr{}, err
	}
	a := defaultDeviceAttr()
	a.NodeGUID = d.guid
	a.SysImageGUID = d.guid
	return a, nil
}

// QueryPort returns the attributes of port 1, the only port (ibv_query_port). Its state follows
// the link of the interface the device is bound to, as rxe's does.
func (d *Device) QueryPort(port uint8) (PortAttr, error) {
	if err := d.check("query_port"); err != nil {
		return PortAttr{}, err
	}
	if port != 1 {
		return PortAttr{}, argErr("query_port", ErrInvalidPort, fmt.Sprintf("port %d (the device has port 1 only)", port))
	}
	c := d.rt.Counters()
	state, phys := portOnLink(d.link())
	return PortAttr{
		State:         state,
		MaxMTU:        MTU4096,
		ActiveMTU:     d.mtu,
		GIDTblLen:     gidTableLen,
		PortCapFlags:  PortCMSup,
		MaxMsgSz:      maxMsgSize,
		BadPKeyCntr:   uint32(c.Get(counter.RcvdBadPKey)),
		QKeyViolCntr:  uint32(c.Get(counter.QKeyViolation)),
		PKeyTblLen:    1,
		MaxVLNum:      1,
		ActiveWidth:   1, // 1X
		ActiveSpeed:   1, // SDR: what ib_get_eth_speed reports for an unknown link speed
		PhysState:     phys,
		LinkLayer:     LinkLayerEthernet,
		SubnetTimeout: 0,
	}, nil
}

// QueryGID returns the GID at index of port 1's GID table (ibv_query_gid).
func (d *Device) QueryGID(index int) (GID, error) {
	if err := d.check("query_gid"); err != nil {
		return GID{}, err
	}
	if index < 0 || index >= len(d.gids) {
		return GID{}, argErr("query_gid", ErrInvalidGIDIndex, fmt.Sprintf("index %d (table has %d entries)", index, len(d.gids)))
	}
	return d.gids[index].GID, nil
}

// GIDTable returns port 1's GID table (ibv_query_gid_table): index 0 the link-local GID derived
// from the interface's MAC, then the IPv4-mapped addresses, then the other IPv6 addresses.
func (d *Device) GIDTable() []GIDEntry {
	return append([]GIDEntry(nil), d.gids...)
}

// QueryPKey returns the P_Key at index of port 1's P_Key table (ibv_query_pkey); the table holds
// the default P_Key 0xFFFF only, as rxe's does.
func (d *Device) QueryPKey(index int) (uint16, error) {
	if err := d.check("query_pkey"); err != nil {
		return 0, err
	}
	if index != 0 {
		return 0, argErr("query_pkey", ErrInvalidPKeyIndex, fmt.Sprintf("index %d (table has 1 entry)", index))
	}
	return DefaultPKey, nil
}

// DefaultPKey is the full-membership default partition key, the only entry of the P_Key table.
const DefaultPKey = packet.DefaultPKey

// gidTableLen is ibv_port_attr.gid_tbl_len, rxe's RXE_PORT_GID_TBL_LEN.
const gidTableLen = 1024

// sourceAddr resolves a GID index to the local address packets leave from; entries the device
// has no socket on (the link-local GID of loopback) do not resolve.
func (d *Device) sourceAddr(sgidIndex uint8) (netip.Addr, bool) {
	i := int(sgidIndex)
	if i >= len(d.gids) || !d.gids[i].Usable {
		return netip.Addr{}, false
	}
	a := d.gids[i].GID.Addr()
	for _, b := range d.bind.Addrs {
		if b.WithZone("") == a {
			return b, true
		}
	}
	return a, true
}

// gidIndexUsable reports whether i names a GID the device can send from.
func (d *Device) gidIndexUsable(i int) bool {
	return i >= 0 && i < len(d.gids) && d.gids[i].Usable
}

// unusableGID explains why GID index i is not one the device can send from.
func (d *Device) unusableGID(i int) string {
	if i < 0 || i >= len(d.gids) {
		return fmt.Sprintf("ah_attr.grh.sgid_index %d is past the end of %s's GID table (%d entries)", i, d.name, len(d.gids))
	}
	a := d.gids[i].GID.Addr()
	if netdev := d.bind.NetDev; i == 0 && netdev != "" && d.cfg.Interface != "" {
		// Like rxe, index 0 holds the link-local address derived from the MAC (EUI-64), which
		// an interface whose link-local address comes from another address generation mode
		// (stable-privacy, random) does not have: nothing would reach it, on rxe either.
		return fmt.Sprintf("ah_attr.grh.sgid_index 0 is %v, the link-local GID derived from %s's MAC, which %s does not have "+
			"(its IPv6 address generation mode is not EUI-64); add it (ip -6 addr add %v/64 dev %s) or use another GID index",
			a, netdev, netdev, a, netdev)
	}
	return fmt.Sprintf("ah_attr.grh.sgid_index %d is %v, which %s is not bound to", i, a, d.name)
}

// The Context of each internal QP, SRQ and CQ is its public owner (set when the facade creates
// it, before anything can report on it), so that events name the public objects without a
// lookup.
func qpOwner(q *qp.QP) *QP    { w, _ := q.Context().(*QP); return w }
func srqOwner(s *qp.SRQ) *SRQ { w, _ := s.Context().(*SRQ); return w }
func cqOwner(c *cq.CQ) *CQ    { w, _ := c.Context().(*CQ); return w }

// cqError raises EventCQErr for an overrun CQ. It may run with CQ locks held; pushing an event
// never blocks.
func (d *Device) cqError(c *cq.CQ) {
	d.events.push(AsyncEvent{Type: EventCQErr, CQ: cqOwner(c), Port: 1})
}

// eventSink turns the QP table's events into the device's asynchronous events, with the public
// objects in place of the internal ones.
type eventSink struct{ d *Device }

// HandleEvent implements qp.EventSink. It never blocks.
func (s eventSink) HandleEvent(e qp.Event) {
	ev := AsyncEvent{Type: e.Type, Port: e.PortNum}
	if e.QP != nil {
		ev.QP = qpOwner(e.QP)
	}
	if e.SRQ != nil {
		ev.SRQ = srqOwner(e.SRQ)
	}
	if e.CQ != nil {
		ev.CQ = cqOwner(e.CQ)
	}
	s.d.events.push(ev)
	if ev.QP != nil && ev.QP.onEvent != nil {
		ev.QP.onEvent(ev)
	}
}

// bindTo finds the interface behind cfg.Addr or cfg.Interface and lays out the GID table.
func bindTo(cfg *resolved) (*netdev.Binding, error) {
	if cfg.Interface == "" {
		return netdev.ByAddr(cfg.Addr), nil
	}
	b, err := netdev.ByInterface(cfg.Interface)
	switch {
	case errors.Is(err, netdev.ErrNoAddresses):
		return nil, &Error{Op: "open", Err: detailErr{ErrNoAddresses, "interface " + cfg.Interface}}
	case err != nil:
		return nil, configErr(fmt.Sprintf("Interface %q: %v", cfg.Interface, err))
	}
	return b, nil
}

// gidEntries turns a binding's GID table into port 1's GIDEntry rows.
func gidEntries(b *netdev.Binding) []GIDEntry {
	out := make([]GIDEntry, len(b.GIDs))
	for i, g := range b.GIDs {
		out[i] = GIDEntry{Index: i, GID: GIDFromAddr(g.Addr), Type: GIDTypeRoCEv2, NetDev: b.NetDev, Usable: g.Usable, PortNum: 1}
	}
	return out
}

// activeMTU derives the port's active MTU as rxe does: the interface MTU less 80 bytes for the
// IP, UDP, BTH and ICRC overhead, rounded down to an IB MTU, at least 256 and at most 4096. An
// unknown interface MTU (a network supplied by the caller) gives 4096.
func activeMTU(ifMTU int) MTU {
	if ifMTU <= 0 {
		return MTU4096
	}
	return MTUFromBytes(ifMTU - 80)
}

// adjustIPv4ID is netio's SetIPv4ID hook: the ICRC follows the IPv4 ID the kernel gives a segment
// of a UDP_SEGMENT send. A packet sent in pieces carries its ICRC at the end of its tail.
func adjustIPv4ID(m *netio.Message, from, to uint16) {
	if len(m.Tail) < packet.ICRCSize {
		packet.AdjustICRCIPv4ID(m.Buf, from, to)
		return
	}
	packet.AdjustICRCIPv4IDAt(m.Tail[len(m.Tail)-packet.ICRCSize:], m.Len(), from, to)
}
