package gorxe

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// enginePackages are the packages a program reaches only through the root: the root names each
// of their types a user sees with a documented alias.
var enginePackages = []string{"transport", "packet", "mr", "qp", "cq", "netio"}

// No exported declaration of the root (function, method, field, nor a field or method of a type
// it aliases) mentions a type of an engine package the root does not alias: a user reading go doc
// of the root finds every type under a name of the root.
func TestAPIMentionsEngineTypesOnlyThroughAliases(t *testing.T) {
	fset := token.NewFileSet()
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	var files []*ast.File
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		files = append(files, f)
	}
	// The dependencies come from the build's export data, which go list hands out.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to find the export data with")
	}
	out, err := exec.Command(goTool, "list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", ".").Output()
	require.NoError(t, err, "go list -export")
	export := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, file, _ := strings.Cut(line, "=")
		export[path] = file
	}
	lookup := func(path string) (io.ReadCloser, error) { return os.Open(export[path]) }
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	root, err := conf.Check("github.com/gorxe/gorxe", fset, files, nil)
	require.NoError(t, err)

	isEngine := func(p *types.Package) bool {
		return p != nil && slices.Contains(enginePackages, strings.TrimPrefix(p.Path(), "github.com/gorxe/gorxe/"))
	}
	aliased := map[*types.TypeName]string{} // engine type -> its root alias
	scope := root.Scope()
	for _, name := range scope.Names() {
		if tn, ok := scope.Lookup(name).(*types.TypeName); ok && tn.Exported() && tn.IsAlias() {
			if n, ok := types.Unalias(tn.Type()).(*types.Named); ok && isEngine(n.Obj().Pkg()) {
				aliased[n.Obj()] = name
			}
		}
	}

	seen := map[types.Type]bool{}
	var visit func(where string, typ types.Type)
	visitMethods := func(where string, n *types.Named) {
		ms := types.NewMethodSet(types.NewPointer(n))
		for i := range ms.Len() {
			if m := ms.At(i).Obj(); m.Exported() {
				visit(where+"."+m.Name(), m.Type())
			}
		}
	}
	visit = func(where string, typ types.Type) {
		typ = types.Unalias(typ)
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch typ := typ.(type) {
		case *types.Named:
			obj := typ.Obj()
			switch {
			case isEngine(obj.Pkg()):
				if _, ok := aliased[obj]; !ok {
					assert.Fail(t, "engine type in the root's API", "%s mentions %s.%s, which the root does not alias", where, obj.Pkg().Name(), obj.Name())
					return
				}
			case obj.Pkg() != root:
				return // the standard library and the packages the root doc names (counter, clock, capture)
			}
			if obj.Exported() {
				visitMethods(obj.Name(), typ)
				visit(obj.Name(), typ.Underlying())
			}
		case *types.Struct:
			for i := range typ.NumFields() {
				if f := typ.Field(i); f.Exported() {
					visit(where+"."+f.Name(), f.Type())
				}
			}
		case *types.Interface:
			for i := range typ.NumMethods() {
				visit(where+"."+typ.Method(i).Name(), typ.Method(i).Type())
			}
		case *types.Signature:
			for _, tuple := range []*types.Tuple{typ.Params(), typ.Results()} {
				for i := range tuple.Len() {
					visit(where, tuple.At(i).Type())
				}
			}
		case *types.Pointer:
			visit(where, typ.Elem())
		case *types.Slice:
			visit(where, typ.Elem())
		case *types.Array:
			visit(where, typ.Elem())
		case *types.Map:
			visit(where, typ.Key())
			visit(where, typ.Elem())
		case *types.Chan:
			visit(where, typ.Elem())
		}
	}
	for _, name := range scope.Names() {
		if obj := scope.Lookup(name); obj.Exported() {
			visit(name, obj.Type())
		}
	}
}
