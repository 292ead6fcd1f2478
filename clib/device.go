//go:build gorxe_clib

package main

/*
#include <stdlib.h>
#include "clib.h"
*/
import "C"

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/internal/devselect"
)

// devEntry is one listed device. Its struct ibv_device lives as long as the process: programs
// keep device pointers past ibv_free_device_list when they opened them.
type devEntry struct {
	name  string
	cfg   gorxe.Config
	index int
	c     *C.struct_ibv_device

	// The bound device, shared by every context of the process that uses the entry, as the
	// contexts of one process share an rdma-core device (pyverbs opens a context per test side).
	mu     sync.Mutex
	dev    *gorxe.Device
	users  int
	cancel context.CancelFunc
}

// receivePoll is Config.ReceivePoll of the library's devices: two C processes over loopback on two
// cores measured 64-byte ib_write_bw at 0.47 M messages/s with it and 0.37 without, the other
// perftest figures no worse.
const receivePoll = 200 * time.Microsecond

// acquire returns the entry's bound device, opening it (binding its UDP port) for the first
// user. A port that is taken is explained on stderr, naming the variable that gives the program
// another address.
func (e *devEntry) acquire() (*gorxe.Device, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dev == nil {
		// No latency mode (Config.BusyPoll): poll_cq reads its CQ's ring in C and, when that is
		// empty, runs what the network holds on the program's thread itself (ring.c), which is
		// what latency mode's CQ poll does for Go programs. The receive goroutine keeps polling
		// the socket for a while after each read (Config.ReceivePoll), as the Go tools' bandwidth
		// tests have it, for a program that waits elsewhere (perftest's servers wait on a
		// socket); it stops as soon as a busy-polling thread takes the datagrams first.
		cfg := e.cfg
		cfg.ReceivePoll = receivePoll
		d, err := gorxe.Open(cfg)
		if err != nil {
			warnDevice(e.name, devselect.ExplainInUse(err, cfg.Port,
				"give each program its own address with "+devselect.EnvAddr+" (on one host, e.g. "+
					devselect.EnvAddr+"=127.0.0.1 and "+devselect.EnvAddr+"=127.0.0.2)"))
			return nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		e.dev, e.cancel = d, cancel
		go forwardAsyncEvents(ctx, e, d)
	}
	e.users++
	return e.dev, nil
}

// release ends one user's hold on the bound device; the last one closes it.
func (e *devEntry) release() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.users--; e.users == 0 {
		e.cancel()
		e.dev.Close()
		e.dev = nil
	}
}

// gx_send_held_acks sends the ACKs every bound device holds back (Device.SendHeldACKs), for the
// library's exit handler (exit.c).
//
//export gx_send_held_acks
func gx_send_held_acks() {
	var rc C.int
	defer catch("exit", &rc)
	devMu.Lock()
	entries := make([]*devEntry, 0, len(devices))
	for _, e := range devices {
		entries = append(entries, e)
	}
	devMu.Unlock()
	for _, e := range entries {
		e.mu.Lock()
		d := e.dev
		e.mu.Unlock()
		if d != nil {
			d.SendHeldACKs()
		}
	}
}

// devContext is an opened device (struct ibv_context). The device binds its UDP port when the
// first object is created on it, not when it is opened, so ibv_devinfo runs beside a program
// that holds the port; until then queries are answered by a twin that binds nothing.
type devContext struct {
	entry  *devEntry
	query  *gorxe.Device
	asyncW int // write end of the async_fd pipe

	mu  sync.Mutex
	dev *gorxe.Device // the entry's bound device once this context created an object
}

var (
	devMu   sync.Mutex
	devices = map[string]*devEntry{}
	byCDev  = map[*C.struct_ibv_device]*devEntry{}
)

// setString copies s into a fixed C char array, NUL-terminated and truncated to fit.
func setString(dst *C.char, size int, s string) {
	b := unsafe.Slice((*byte)(unsafe.Pointer(dst)), size)
	n := copy(b[:size-1], s)
	b[n] = 0
}

// entryFor returns the entry of the device cfg describes, made on first listing: a name stands
// for one configuration, so a device listed again is the same entry, at the same C address.
func entryFor(cfg gorxe.Config) *devEntry {
	name := devselect.DeviceName(cfg)
	if e, ok := devices[name]; ok {
		return e
	}
	e := &devEntry{name: name, cfg: cfg, index: len(devices)}
	e.c = (*C.struct_ibv_device)(C.calloc(1, C.sizeof_struct_ibv_device))
	e.c.node_type = C.IBV_NODE_CA
	e.c.transport_type = C.IBV_TRANSPORT_IB
	setString(&e.c.name[0], len(e.c.name), name)
	uverbs := "uverbs" + strconv.Itoa(e.index)
	setString(&e.c.dev_name[0], len(e.c.dev_name), uverbs)
	setString(&e.c.dev_path[0], len(e.c.dev_path), "/sys/class/infiniband_verbs/"+uverbs)
	setString(&e.c.ibdev_path[0], len(e.c.ibdev_path), "/sys/class/infiniband/"+name)
	devices[name] = e
	byCDev[e.c] = e
	return e
}

//export gx_device_list
func gx_device_list(num *C.int) (list **C.struct_ibv_device) {
	var rc C.int
	defer func() {
		if rc != 0 {
			C.gx_set_errno(rc)
			list = nil
		}
	}()
	defer catch("get_device_list", &rc)
	cfgs, err := devselect.Configs(os.Getenv)
	if err != nil {
		warn("%v", err)
		rc = C.int(syscall.ENODEV)
		return nil
	}
	devMu.Lock()
	defer devMu.Unlock()
	arr := (**C.struct_ibv_device)(C.calloc(C.size_t(len(cfgs)+1), C.size_t(unsafe.Sizeof(uintptr(0)))))
	if arr == nil {
		rc = C.int(syscall.ENOMEM)
		return nil
	}
	out := unsafe.Slice(arr, len(cfgs)+1)
	for i, cfg := range cfgs {
		out[i] = entryFor(cfg).c
	}
	*num = C.int(len(cfgs))
	return arr
}

func entryOf(d *C.struct_ibv_device) *devEntry {
	devMu.Lock()
	defer devMu.Unlock()
	return byCDev[d]
}

//export gx_device_guid
func gx_device_guid(d *C.struct_ibv_device) (guid C.uint64_t) {
	var rc C.int
	defer catch("get_device_guid", &rc)
	e := entryOf(d)
	if e == nil {
		return 0
	}
	q, err := devselect.OpenUnbound(e.cfg)
	if err != nil {
		return 0
	}
	defer q.Close()
	a, err := q.Query()
	if err != nil {
		return 0
	}
	return C.uint64_t(a.NodeGUID)
}

//export gx_device_index
func gx_device_index(d *C.struct_ibv_device) C.int {
	if e := entryOf(d); e != nil {
		return C.int(e.index)
	}
	return -1
}

var (
	ctxMu    sync.Mutex
	contexts = map[*C.struct_ibv_context]*devContext{}
)

func contextOf(c *C.struct_ibv_context) *devContext {
	ctxMu.Lock()
	defer ctxMu.Unlock()
	return contexts[c]
}

//export gx_open
func gx_open(d *C.struct_ibv_device, c *C.struct_ibv_context, asyncW C.int) (rc C.int) {
	defer catch("open_device", &rc)
	e := entryOf(d)
	if e == nil {
		return C.int(syscall.ENODEV)
	}
	q, err := devselect.OpenUnbound(e.cfg)
	if err != nil {
		warnDevice(e.name, err)
		return errnoOf(err)
	}
	ctxMu.Lock()
	contexts[c] = &devContext{entry: e, query: q, asyncW: int(asyncW)}
	ctxMu.Unlock()
	return 0
}

//export gx_close
func gx_close(c *C.struct_ibv_context) (rc C.int) {
	defer catch("close_device", &rc)
	ctxMu.Lock()
	dc := contexts[c]
	delete(contexts, c)
	ctxMu.Unlock()
	if dc == nil {
		return C.int(syscall.EINVAL)
	}
	dc.query.Close()
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if dc.dev != nil {
		dc.entry.release()
	}
	syscall.Close(dc.asyncW)
	return 0
}

// device returns the bound device of the context's entry, taking a hold on it on first use.
func (dc *devContext) device() (*gorxe.Device, error) {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if dc.dev == nil {
		d, err := dc.entry.acquire()
		if err != nil {
			return nil, err
		}
		dc.dev = d
	}
	return dc.dev, nil
}

// attrDevice is the device queries read: the bound one once it exists, else the twin.
func (dc *devContext) attrDevice() *gorxe.Device {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if dc.dev != nil {
		return dc.dev
	}
	return dc.query
}

func be64(v uint64) C.__be64 {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return C.__be64(binary.NativeEndian.Uint64(b[:]))
}

//export gx_query_device
func gx_query_device(c *C.struct_ibv_context, out *C.struct_ibv_device_attr) (rc C.int) {
	defer catch("query_device", &rc)
	dc := contextOf(c)
	if dc == nil || out == nil {
		return C.int(syscall.EINVAL)
	}
	a, err := dc.attrDevice().Query()
	if err != nil {
		return errnoOf(err)
	}
	*out = C.struct_ibv_device_attr{}
	setString(&out.fw_ver[0], len(out.fw_ver), a.FwVer)
	out.node_guid = be64(a.NodeGUID)
	out.sys_image_guid = be64(a.SysImageGUID)
	out.max_mr_size = C.uint64_t(a.MaxMRSize)
	out.page_size_cap = C.uint64_t(a.PageSizeCap)
	out.vendor_id = C.uint32_t(a.VendorID)
	out.vendor_part_id = C.uint32_t(a.VendorPartID)
	out.hw_ver = C.uint32_t(a.HwVer)
	out.max_qp = C.int(a.MaxQP)
	out.max_qp_wr = C.int(a.MaxQPWR)
	out.device_cap_flags = C.uint(uint32(a.DeviceCapFlags)) // the upper bits have no room here
	out.max_sge = C.int(a.MaxSGE)
	out.max_sge_rd = C.int(a.MaxSGERd)
	out.max_cq = C.int(a.MaxCQ)
	out.max_cqe = C.int(a.MaxCQE)
	out.max_mr = C.int(a.MaxMR)
	out.max_pd = C.int(a.MaxPD)
	out.max_qp_rd_atom = C.int(a.MaxQPRdAtom)
	out.max_ee_rd_atom = C.int(a.MaxEERdAtom)
	out.max_res_rd_atom = C.int(a.MaxResRdAtom)
	out.max_qp_init_rd_atom = C.int(a.MaxQPInitRdAtom)
	out.max_ee_init_rd_atom = C.int(a.MaxEEInitRdAtom)
	out.atomic_cap = C.enum_ibv_atomic_cap(a.AtomicCap)
	out.max_ee = C.int(a.MaxEE)
	out.max_rdd = C.int(a.MaxRDD)
	out.max_mw = C.int(a.MaxMW)
	out.max_raw_ipv6_qp = C.int(a.MaxRawIPv6QP)
	out.max_raw_ethy_qp = C.int(a.MaxRawEthyQP)
	out.max_mcast_grp = C.int(a.MaxMcastGrp)
	out.max_mcast_qp_attach = C.int(a.MaxMcastQPAttach)
	out.max_total_mcast_qp_attach = C.int(a.MaxTotalMcastQPAttach)
	out.max_ah = C.int(a.MaxAH)
	out.max_fmr = C.int(a.MaxFMR)
	out.max_map_per_fmr = C.int(a.MaxMapPerFMR)
	out.max_srq = C.int(a.MaxSRQ)
	out.max_srq_wr = C.int(a.MaxSRQWR)
	out.max_srq_sge = C.int(a.MaxSRQSGE)
	out.max_pkeys = C.uint16_t(a.MaxPKeys)
	out.local_ca_ack_delay = C.uint8_t(a.LocalCAAckDelay)
	out.phys_port_cnt = C.uint8_t(a.PhysPortCnt)
	return 0
}

//export gx_query_port
func gx_query_port(c *C.struct_ibv_context, port C.uint8_t, out *C.struct_ibv_port_attr) (rc C.int) {
	defer catch("query_port", &rc)
	dc := contextOf(c)
	if dc == nil || out == nil {
		return C.int(syscall.EINVAL)
	}
	a, err := dc.attrDevice().QueryPort(uint8(port))
	if err != nil {
		return errnoOf(err)
	}
	out.state = C.enum_ibv_port_state(a.State)
	out.max_mtu = C.enum_ibv_mtu(a.MaxMTU)
	out.active_mtu = C.enum_ibv_mtu(a.ActiveMTU)
	out.gid_tbl_len = C.int(a.GIDTblLen)
	out.port_cap_flags = C.uint32_t(a.PortCapFlags)
	out.max_msg_sz = C.uint32_t(a.MaxMsgSz)
	out.bad_pkey_cntr = C.uint32_t(a.BadPKeyCntr)
	out.qkey_viol_cntr = C.uint32_t(a.QKeyViolCntr)
	out.pkey_tbl_len = C.uint16_t(a.PKeyTblLen)
	out.lid = C.uint16_t(a.LID)
	out.sm_lid = C.uint16_t(a.SMLID)
	out.lmc = C.uint8_t(a.LMC)
	out.max_vl_num = C.uint8_t(a.MaxVLNum)
	out.sm_sl = C.uint8_t(a.SMSL)
	out.subnet_timeout = C.uint8_t(a.SubnetTimeout)
	out.init_type_reply = C.uint8_t(a.InitTypeReply)
	out.active_width = C.uint8_t(a.ActiveWidth)
	out.active_speed = C.uint8_t(a.ActiveSpeed)
	out.phys_state = C.uint8_t(a.PhysState)
	out.link_layer = C.uint8_t(a.LinkLayer)
	return 0
}

// gx_query_gid reads GID index of port 1's table, and its type when gidType is set. An index
// past the populated entries but inside the table (gid_tbl_len) is an empty entry: a zero GID and
// ENODATA, which ibv_query_gid reports as success, as the empty sysfs entries of rxe read.
//
//export gx_query_gid
func gx_query_gid(c *C.struct_ibv_context, port C.uint32_t, index C.int, gid *C.uint8_t, gidType *C.uint32_t) (rc C.int) {
	defer catch("query_gid", &rc)
	dc := contextOf(c)
	if dc == nil || gid == nil {
		return C.int(syscall.EINVAL)
	}
	d := dc.attrDevice()
	pa, err := d.QueryPort(uint8(port))
	if port > 255 || err != nil {
		return C.int(syscall.EINVAL)
	}
	out := unsafe.Slice((*byte)(unsafe.Pointer(gid)), 16)
	clear(out)
	if index < 0 || int(index) >= pa.GIDTblLen {
		return C.int(syscall.EINVAL)
	}
	tbl := d.GIDTable()
	if int(index) >= len(tbl) {
		return C.int(syscall.ENODATA)
	}
	copy(out, tbl[index].GID[:])
	if gidType != nil {
		*gidType = C.uint32_t(tbl[index].Type)
	}
	return 0
}

//export gx_gid_count
func gx_gid_count(c *C.struct_ibv_context) (n C.int) {
	defer catch("query_gid_table", &n)
	dc := contextOf(c)
	if dc == nil {
		return -C.int(syscall.EINVAL)
	}
	return C.int(len(dc.attrDevice().GIDTable()))
}

//export gx_ifindex
func gx_ifindex(c *C.struct_ibv_context) (n C.uint32_t) {
	var rc C.int
	defer catch("query_gid_ex", &rc)
	dc := contextOf(c)
	if dc == nil {
		return 0
	}
	ifi, err := net.InterfaceByName(dc.attrDevice().NetDev())
	if err != nil {
		return 0
	}
	return C.uint32_t(ifi.Index)
}

//export gx_query_pkey
func gx_query_pkey(c *C.struct_ibv_context, port C.uint8_t, index C.int, pkey *C.uint16_t) (rc C.int) {
	defer catch("query_pkey", &rc)
	dc := contextOf(c)
	if dc == nil {
		return C.int(syscall.EINVAL)
	}
	if port != 1 {
		return C.int(syscall.EINVAL)
	}
	p, err := dc.attrDevice().QueryPKey(int(index))
	if err != nil {
		return errnoOf(err)
	}
	*pkey = C.uint16_t(p)
	return 0
}

// forwardAsyncEvents writes the device's asynchronous events to the async_fd of the contexts
// they concern as 16-byte records (element, type), which ibv_get_async_event reads: an event of a
// QP, CQ or SRQ to the context that created it, a port event to every context using the device.
func forwardAsyncEvents(ctx context.Context, e *devEntry, d *gorxe.Device) {
	for {
		ev, err := d.GetAsyncEvent(ctx)
		if err != nil {
			return
		}
		elem, owner, ok := objects.eventTarget(ev)
		if !ok {
			continue
		}
		var rec [16]byte
		binary.NativeEndian.PutUint64(rec[0:], elem)
		binary.NativeEndian.PutUint32(rec[8:], uint32(ev.Type))
		ctxMu.Lock()
		for c, dc := range contexts {
			if dc.entry == e && (owner == nil || owner == c) {
				_ = writeAll(dc.asyncW, rec[:]) // a context closed meanwhile has nobody to tell
			}
		}
		ctxMu.Unlock()
	}
}

// writeAll writes b to the pipe fd in one piece (records are far below PIPE_BUF, so a write is
// atomic), retrying on EINTR.
func writeAll(fd int, b []byte) error {
	for {
		_, err := syscall.Write(fd, b)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		return err
	}
}

var (
	strMu    sync.Mutex
	cStrings = map[string]*C.char{}
)

// cString returns a C copy of s that lives as long as the process, made once per text: the
// *_str functions return static strings.
func cString(s string) *C.char {
	strMu.Lock()
	defer strMu.Unlock()
	if p, ok := cStrings[s]; ok {
		return p
	}
	p := C.CString(s)
	cStrings[s] = p
	return p
}

//export gx_wc_status_str
func gx_wc_status_str(s C.int) *C.char { return cString(gorxe.WCStatus(s).String()) }

//export gx_event_type_str
func gx_event_type_str(t C.int) *C.char { return cString(gorxe.EventType(t).String()) }
