package gorxe

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
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

// Sentinels carry bare texts, and every root sentinel is declared in errors.go: the *Error around
// a cause names the package and the verb, so a prefix in a sentinel ("qp: ...") would say it
// twice.
func TestSentinelsAreBareAndRootOnesInErrorsGo(t *testing.T) {
	prefixed := regexp.MustCompile(`^[a-z]+: `)
	for _, dir := range []string{".", "packet", "qp", "cq", "mr", "netio", "transport"} {
		pkg, err := build.ImportDir(dir, 0)
		require.NoError(t, err)
		fset := token.NewFileSet()
		for _, name := range pkg.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
			require.NoError(t, err)
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
					if dir != "." || name == "errors.go" {
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
