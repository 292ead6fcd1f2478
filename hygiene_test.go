package gorxe

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every verb error reads "gorxe: <verb>: <cause>" once: no internal package names, no repeats.
func TestErrorTextsSayThingsOnce(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	pd, err := d.AllocPD()
	require.NoError(t, err)

	_, err = pd.RegMR(nil, AccessLocalWrite)
	require.ErrorIs(t, err, ErrEmptyRegion)
	assert.Equal(t, "gorxe: reg_mr: zero-length registration", err.Error())

	m, err := pd.RegMR(make([]byte, 64), AccessLocalWrite)
	require.NoError(t, err)
	err = m.Rereg(0, nil, nil, 0)
	require.ErrorIs(t, err, ErrReregFlags)
	assert.Equal(t, fmt.Sprintf("gorxe: rereg_mr: key %#x: invalid rereg flags", m.LKey()), err.Error())
	require.NoError(t, m.Dereg())
	err = m.Dereg()
	require.ErrorIs(t, err, ErrDestroyed)
	assert.Equal(t, "gorxe: dereg_mr: object destroyed", err.Error())

	x := newTestQPs(t, d)
	q := x.create(t, QPTypeRC)
	err = q.SendCQ().Destroy()
	require.ErrorIs(t, err, ErrInUse)
	assert.Equal(t, "gorxe: destroy_cq: object in use: 2 queue pairs still use the CQ", err.Error())

	c, err := d.CreateCQ(4, nil)
	require.NoError(t, err)
	require.NoError(t, c.Destroy())
	err = c.Destroy()
	require.ErrorIs(t, err, ErrDestroyed)
	assert.Equal(t, "gorxe: destroy_cq: object destroyed", err.Error())

	assert.Equal(t, "gorxe: modify_qp: RC QP RESET->RTS: invalid state transition",
		q.Modify(&QPAttr{State: QPStateRTS}, QPAttrState).Error())
	assert.Equal(t, "gorxe: modify_qp: invalid port number: port_num = 2, must be in 1..1",
		q.Modify(&QPAttr{State: QPStateInit, PortNum: 2}, rcInitMask).Error())
	assert.Equal(t, "gorxe: post_send: work request 0: QP state does not allow posting",
		q.PostSend([]SendWR{{Opcode: WRSend}}).Error())
	_, err = Open(Config{Addr: mustAddr("10.0.0.1"), Faults: FaultConfig{Loss: 2}})
	assert.Equal(t, `gorxe: open: invalid configuration: Faults: fault spec "loss=2": invalid value (want a probability between 0 and 1)`, err.Error())
}

// A context that is already done wins over queued events, as it does for a blocking wait.
func TestGetAsyncEventDoneContext(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1") // Open queues EventPortActive
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ev, err := d.GetAsyncEvent(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, AsyncEvent{}, ev)
	assert.Equal(t, "no event", fmt.Sprint(ev), "a failed GetAsyncEvent's event must not read as a CQ error")

	ev, err = d.GetAsyncEvent(context.Background())
	require.NoError(t, err)
	assert.Equal(t, EventPortActive, ev.Type)
	assert.Equal(t, "port active (port 1)", fmt.Sprint(ev))
}

// The per-group limit holds against concurrent attaches.
func TestAttachMcastLimitConcurrent(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	x := newTestQPs(t, d)
	gid := GIDFromAddr(mustAddr("239.0.0.9"))
	var qps []*QP
	for range 64 {
		qps = append(qps, x.create(t, QPTypeUD))
	}
	var ok atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, q := range qps {
		wg.Go(func() {
			<-start
			if err := q.AttachMcast(gid, 0); err == nil {
				ok.Add(1)
			} else if !errors.Is(err, ErrInvalidArgument) {
				assert.Fail(t, fmt.Sprintf("attach: %v", err))
			}
		})
	}
	close(start)
	wg.Wait()
	attr, err := d.Query()
	require.NoError(t, err)
	assert.Equal(t, int32(attr.MaxMcastQPAttach), ok.Load())
}

// GORXE_PORT is the default of Config.Port for every program, as GORXE_FAULTS is for faults.
func TestEnvPort(t *testing.T) {
	base := Config{Addr: mustAddr("10.0.0.1")}
	t.Setenv(EnvPort, "")
	rc, err := base.resolve()
	require.NoError(t, err)
	assert.Equal(t, uint16(DefaultPort), rc.port)

	t.Setenv(EnvPort, "14791")
	rc, err = base.resolve()
	require.NoError(t, err)
	assert.Equal(t, uint16(14791), rc.port)

	explicit := base
	explicit.Port = 5000
	rc, err = explicit.resolve()
	require.NoError(t, err)
	assert.Equal(t, uint16(5000), rc.port, "Config.Port wins over the environment")

	for _, bad := range []string{"0", "70000", "x"} {
		t.Setenv(EnvPort, bad)
		_, err = base.resolve()
		assert.ErrorIs(t, err, ErrInvalidConfig, bad)
	}
}

// Sentinels carry bare texts, and every root sentinel is declared in errors.go: the *Error around
// a cause names the package and the verb, so a prefix in a sentinel ("qp: ...") would say it
// twice.
func TestSentinelsAreBareAndRootOnesInErrorsGo(t *testing.T) {
	prefixed := regexp.MustCompile(`^[a-z]+: `)
	for _, dir := range []string{".", "qp", "cq", "mr", "netio", "transport"} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, 0)
		require.NoError(t, err)
		for _, pkg := range pkgs {
			for name, f := range pkg.Files {
				ast.Inspect(f, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.CallExpr:
						sel, ok := n.Fun.(*ast.SelectorExpr)
						if !ok || sel.Sel.Name != "New" || len(n.Args) != 1 {
							return true
						}
						if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "errors" {
							return true
						}
						if lit, ok := n.Args[0].(*ast.BasicLit); ok {
							text, _ := strconv.Unquote(lit.Value)
							assert.NotRegexp(t, prefixed, text, "%s: a sentinel's text names its package", fset.Position(lit.Pos()))
						}
					case *ast.ValueSpec:
						if dir != "." || filepath.Base(name) == "errors.go" {
							return true
						}
						for _, id := range n.Names {
							assert.False(t, strings.HasPrefix(id.Name, "Err"), "%s: root sentinel %s outside errors.go", fset.Position(id.Pos()), id.Name)
						}
					}
					return true
				})
			}
		}
	}
}
