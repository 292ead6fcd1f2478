package qp

import (
	"errors"
	"testing"

	"github.com/gorxe/gorxe/mr"
)

func TestQPNAllocation(t *testing.T) {
	e := newEnv(t)
	l := DefaultLimits()
	l.MaxQP = 3
	e.table = NewTable(Config{Limits: l})
	gsi := e.qp(TypeGSI, defaultCaps())
	if gsi.QPN() != GSIQPN {
		t.Fatalf("GSI QPN %d", gsi.QPN())
	}
	if _, err := e.table.CreateQP(e.pd, &InitAttr{Type: TypeGSI, SendCQ: e.cq(1), RecvCQ: e.cq(1)}); !errors.Is(err, ErrGSIExists) {
		t.Fatalf("second GSI: %v", err)
	}
	a, b, c := e.qp(TypeRC, defaultCaps()), e.qp(TypeUD, defaultCaps()), e.qp(TypeUC, defaultCaps())
	if a.QPN() != 16 || b.QPN() != 17 || c.QPN() != 18 {
		t.Fatalf("QPNs %d %d %d", a.QPN(), b.QPN(), c.QPN())
	}
	if _, err := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: e.cq(1), RecvCQ: e.cq(1)}); !errors.Is(err, ErrTableFull) {
		t.Fatalf("over max_qp: %v", err)
	}
	if e.table.Lookup(17) != b || e.table.Lookup(1) != gsi || e.table.Lookup(19) != nil || e.table.Len() != 4 {
		t.Fatal("lookup")
	}
	if err := b.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := b.Destroy(); !errors.Is(err, ErrDestroyed) {
		t.Fatal(err)
	}
	if e.table.Lookup(17) != nil {
		t.Fatal("destroyed QP still found")
	}
	// Allocation is cyclic: the freed number is reused only after wrapping.
	d := e.qp(TypeRC, defaultCaps())
	if d.QPN() != 17 {
		t.Fatalf("QPN after wrap %d", d.QPN())
	}
	_ = d.Destroy()
	_ = a.Destroy()
	f := e.qp(TypeRC, defaultCaps())
	if f.QPN() != 16 {
		t.Fatalf("next QPN %d, want 16 (17 was just used)", f.QPN())
	}
	if err := b.PostSend([]SendWR{{Opcode: WRSend}}); !errors.Is(err, ErrDestroyed) {
		t.Fatalf("post on destroyed QP: %v", err)
	}
	if err := b.PostRecv([]RecvWR{{}}); !errors.Is(err, ErrDestroyed) {
		t.Fatalf("post recv on destroyed QP: %v", err)
	}
	if err := b.Modify(&Attr{}, 0); !errors.Is(err, ErrDestroyed) {
		t.Fatalf("modify destroyed QP: %v", err)
	}
}

func TestCreateQPValidation(t *testing.T) {
	e := newEnv(t)
	l := DefaultLimits()
	cases := []struct {
		name string
		edit func(*InitAttr)
		want error
	}{
		{"type", func(a *InitAttr) { a.Type = 8 }, ErrInvalidType},
		{"no cq", func(a *InitAttr) { a.SendCQ = nil }, ErrMissingCQ},
		{"send wr", func(a *InitAttr) { a.Cap.MaxSendWR = l.MaxQPWR + 1 }, ErrInvalidCaps},
		{"recv wr", func(a *InitAttr) { a.Cap.MaxRecvWR = -1 }, ErrInvalidCaps},
		{"send sge", func(a *InitAttr) { a.Cap.MaxSendSGE = 33 }, ErrInvalidCaps},
		{"recv sge", func(a *InitAttr) { a.Cap.MaxRecvSGE = 33 }, ErrInvalidCaps},
		{"inline", func(a *InitAttr) { a.Cap.MaxInlineData = 513 }, ErrInvalidCaps},
		{"limits", func(a *InitAttr) {
			a.Cap = Caps{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 32, MaxRecvSGE: 32, MaxInlineData: 512}
		}, nil},
	}
	for _, c := range cases {
		a := InitAttr{Type: TypeRC, SendCQ: e.cq(1), RecvCQ: e.cq(1), Cap: defaultCaps()}
		c.edit(&a)
		_, err := e.table.CreateQP(e.pd, &a)
		if (c.want == nil) != (err == nil) || (c.want != nil && !errors.Is(err, c.want)) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// The QP holds its PD and CQs.
	sc := e.cq(1)
	q, _ := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: sc, RecvCQ: sc})
	if err := sc.Destroy(); err == nil {
		t.Fatal("CQ destroyed under a QP")
	}
	_ = q.Destroy()
	if err := sc.Destroy(); err != nil {
		t.Fatal(err)
	}
}

func TestAH(t *testing.T) {
	e := newEnv(t)
	av := testAV()
	ah, err := e.table.CreateAH(e.pd, &av)
	if err != nil {
		t.Fatal(err)
	}
	if ah.Attr() != av || ah.PD() != e.pd {
		t.Fatal("attr")
	}
	av.IsGlobal = false
	var ae *AttrError
	if _, err := e.table.CreateAH(e.pd, &av); !errors.As(err, &ae) || ae.Name != "ah_attr.is_global" {
		t.Fatalf("AH without GRH: %v", err)
	}
	av = testAV()
	av.GRH.SGIDIndex = 5
	l := DefaultLimits()
	l.GIDTableLen = 2
	small := NewTable(Config{Limits: l})
	if _, err := small.CreateAH(e.pd, &av); !errors.Is(err, ErrInvalidAttr) {
		t.Fatalf("sgid index beyond table: %v", err)
	}
	if err := e.pd.DeallocPD(); !errors.Is(err, mr.ErrPDInUse) {
		t.Fatalf("PD freed under an AH: %v", err)
	}
	if err := ah.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := ah.Destroy(); !errors.Is(err, ErrDestroyed) {
		t.Fatal(err)
	}
}
