package gorxe

import (
	"context"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each verb's error is a *Error whose cause matches the sentinel its documentation names.
func TestErrorsMatchTheirDocs(t *testing.T) {
	f := newTestFabric(t)
	d := f.open(t, "10.0.0.1")
	x := newTestQPs(t, d)
	held, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer held.Close()
	heldPort := uint16(held.LocalAddr().(*net.UDPAddr).Port)

	for _, tc := range []struct {
		name string
		call func(t *testing.T) error
		is   []error
	}{
		{"Modify with port 2", func(t *testing.T) error {
			return x.create(t, QPTypeRC).Modify(&QPAttr{State: QPStateInit, PortNum: 2}, QPAttrState|QPAttrPKeyIndex|QPAttrPort|QPAttrAccessFlags)
		}, []error{ErrInvalidPort, ErrInvalidAttr}},
		{"Modify with P_Key index 1", func(t *testing.T) error {
			return x.create(t, QPTypeRC).Modify(&QPAttr{State: QPStateInit, PortNum: 1, PKeyIndex: 1}, QPAttrState|QPAttrPKeyIndex|QPAttrPort|QPAttrAccessFlags)
		}, []error{ErrInvalidPKeyIndex, ErrInvalidAttr}},
		{"QueryPort 2", func(t *testing.T) error { _, err := d.QueryPort(2); return err }, []error{ErrInvalidPort}},
		{"Open on a taken UDP port", func(t *testing.T) error {
			d, err := Open(Config{Addr: mustAddr("127.0.0.1"), Port: heldPort, Workers: 1})
			if err == nil {
				d.Close()
			}
			return err
		}, []error{ErrAddrInUse, syscall.EADDRINUSE}},
		{"Open on a taken fabric address", func(t *testing.T) error {
			d, err := Open(Config{Addr: mustAddr("10.0.0.1"), Network: f.fab.Network(), Clock: f.clk, Workers: 1})
			if err == nil {
				d.Close()
			}
			return err
		}, []error{ErrAddrInUse}},
		{"Buffer.Free while registered", func(t *testing.T) error {
			b, err := AllocBuffer(4096, BufferOptions{})
			require.NoError(t, err)
			m, err := x.pd.RegMR(b.Bytes(), AccessLocalWrite)
			require.NoError(t, err)
			ferr := b.Free()
			require.NoError(t, m.Dereg())
			require.NoError(t, b.Free())
			return ferr
		}, []error{ErrBufferInUse, ErrInUse}},
		{"Buffer.Free twice", func(t *testing.T) error {
			b, err := AllocBuffer(4096, BufferOptions{})
			require.NoError(t, err)
			require.NoError(t, b.Free())
			return b.Free()
		}, []error{ErrDestroyed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(t)
			var e *Error
			require.ErrorAs(t, err, &e)
			for _, s := range tc.is {
				assert.ErrorIs(t, err, s)
			}
		})
	}
}

// After Close every verb but Poll, AckEvents and the draining of queued events returns
// ErrDeviceClosed, the releasing ones included.
func TestVerbsAfterCloseReturnErrDeviceClosed(t *testing.T) {
	f := newTestFabric(t)
	d := f.open(t, "10.0.0.1")
	x := newTestQPs(t, d)
	ch, err := d.CreateCompChannel()
	require.NoError(t, err)
	chCQ, err := d.CreateCQ(4, ch)
	require.NoError(t, err)
	q := x.create(t, QPTypeUD)
	srq, err := d.CreateSRQ(x.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}})
	require.NoError(t, err)
	mw, err := x.pd.AllocMW(MWType1)
	require.NoError(t, err)
	gid, err := d.QueryGID(1)
	require.NoError(t, err)
	ah, err := x.pd.CreateAH(&AHAttr{IsGlobal: true, PortNum: 1, GRH: GlobalRoute{DGID: gid, SGIDIndex: 1}})
	require.NoError(t, err)
	require.NoError(t, d.Close())

	verbs := map[string]func() error{
		"Close":             d.Close,
		"Query":             func() error { _, err := d.Query(); return err },
		"QueryPort":         func() error { _, err := d.QueryPort(1); return err },
		"QueryGID":          func() error { _, err := d.QueryGID(0); return err },
		"QueryPKey":         func() error { _, err := d.QueryPKey(0); return err },
		"AllocPD":           func() error { _, err := d.AllocPD(); return err },
		"CreateCQ":          func() error { _, err := d.CreateCQ(4, nil); return err },
		"CreateCompChannel": func() error { _, err := d.CreateCompChannel(); return err },
		"CreateQP": func() error {
			_, err := d.CreateQP(x.pd, &QPInitAttr{SendCQ: x.cq, RecvCQ: x.cq, QPType: QPTypeUD})
			return err
		},
		"CreateSRQ": func() error {
			_, err := d.CreateSRQ(x.pd, &SRQInitAttr{Attr: SRQAttr{MaxWR: 4, MaxSGE: 1}})
			return err
		},
		"RegMR":                func() error { _, err := x.pd.RegMR(make([]byte, 8), AccessLocalWrite); return err },
		"AllocMR":              func() error { _, err := x.pd.AllocMR(1); return err },
		"AllocMW":              func() error { _, err := x.pd.AllocMW(MWType1); return err },
		"CreateAH":             func() error { _, err := x.pd.CreateAH(&AHAttr{IsGlobal: true, PortNum: 1}); return err },
		"MR.Rereg":             func() error { return x.mr.Rereg(ReregChangeAccess, nil, nil, AccessLocalWrite) },
		"MR.Dereg":             x.mr.Dereg,
		"MW.Dealloc":           mw.Dealloc,
		"AH.Destroy":           ah.Destroy,
		"PD.Dealloc":           x.pd.Dealloc,
		"CQ.ReqNotify":         func() error { return x.cq.ReqNotify(false) },
		"CQ.Resize":            func() error { return x.cq.Resize(8) },
		"CQ.Wait":              func() error { return chCQ.Wait(t.Context()) },
		"CQ.Destroy":           x.cq.Destroy,
		"CompChannel.GetEvent": func() error { _, err := ch.GetEvent(t.Context()); return err },
		"CompChannel.Destroy":  ch.Destroy,
		"Device.GetAsyncEvent": func() error { return drainAsync(d) },
		"QP.Modify":            func() error { return q.Modify(&QPAttr{State: QPStateErr}, QPAttrState) },
		"QP.Query":             func() error { _, _, err := q.Query(); return err },
		"QP.PostSend":          func() error { return q.PostSend([]SendWR{{Opcode: WRSend}}) },
		"QP.PostRecv":          func() error { return q.PostRecv([]RecvWR{{}}) },
		"QP.BindMW":            func() error { _, err := q.BindMW(mw, MWBindInfo{}); return err },
		"QP.AttachMcast":       func() error { return q.AttachMcast(GIDFromAddr(mustAddr("239.0.0.1")), 0) },
		"QP.DetachMcast":       func() error { return q.DetachMcast(GIDFromAddr(mustAddr("239.0.0.1")), 0) },
		"QP.Destroy":           q.Destroy,
		"SRQ.PostRecv":         func() error { return srq.PostRecv([]RecvWR{{}}) },
		"SRQ.Modify":           func() error { return srq.Modify(&SRQAttr{SRQLimit: 1}, SRQLimit) },
		"SRQ.Query":            func() error { _, err := srq.Query(); return err },
		"SRQ.Destroy":          srq.Destroy,
	}
	for name, verb := range verbs {
		err := verb()
		var e *Error
		if assert.ErrorAs(t, err, &e, name) {
			assert.ErrorIs(t, err, ErrDeviceClosed, name)
		}
	}
	assert.NoError(t, x.cq.AckEvents(0), "AckEvents still works after Close")
}

// drainAsync takes the events queued before Close and returns the error that follows them.
func drainAsync(d *Device) error {
	for {
		if _, err := d.GetAsyncEvent(context.Background()); err != nil {
			return err
		}
	}
}
