package rdmacm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// offFabric are the tests that open no device, so have no clock to run on.
var offFabric = []string{"TestMain", "TestNoUnexportedEmbedding", "TestMGID", "TestEveryTestInABubble"}

// TestEveryTestInABubble: every other test of the package runs in a synctest bubble (directly or
// through inBubble), as main_test.go says, so none waits on the real clock.
func TestEveryTestInABubble(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range files {
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || slices.Contains(offFabric, fn.Name.Name) {
				continue
			}
			body := string(src[fset.Position(fn.Body.Pos()).Offset:fset.Position(fn.Body.End()).Offset])
			assert.True(t, strings.Contains(body, "synctest.Test(") || strings.Contains(body, "inBubble("),
				"%s: %s runs outside a synctest bubble", fset.Position(fn.Pos()), fn.Name.Name)
		}
	}
}
