package gorxe

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// typeRef names a type of the module: the directory of its package ("" for the root) and its name.
type typeRef struct{ dir, name string }

// typeInfo is what a doc may cite of a type: its fields and methods, and the types whose members
// it has too (embedded fields, and the type an alias or a defined type stands for).
type typeInfo struct {
	members map[string]bool
	from    []typeRef
}

// apiIndex holds the exported declarations of every package of the module, parsed from source.
type apiIndex struct {
	dirs   map[string][]string             // package name -> directories of packages with that name
	idents map[string]map[string]bool      // directory -> top-level identifiers
	types  map[string]map[string]*typeInfo // directory -> type name -> its members
}

// indexModule parses every non-test Go file of the module under root.
func indexModule(t *testing.T, root string) *apiIndex {
	t.Helper()
	x := &apiIndex{dirs: map[string][]string{}, idents: map[string]map[string]bool{}, types: map[string]map[string]*typeInfo{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		pkgs, err := parseSources(fset, path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(strings.TrimPrefix(rel, "."))
		for name, files := range pkgs {
			x.dirs[name] = append(x.dirs[name], dir)
			for _, f := range files {
				x.addFile(dir, f)
			}
		}
		return nil
	})
	require.NoError(t, err)
	return x
}

// parseSources parses the Go files of dir other than tests, by package name.
func parseSources(fset *token.FileSet, dir string) (map[string][]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	pkgs := map[string][]*ast.File{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		pkgs[f.Name.Name] = append(pkgs[f.Name.Name], f)
	}
	return pkgs, nil
}

func (x *apiIndex) typ(dir, name string) *typeInfo {
	if x.types[dir] == nil {
		x.types[dir] = map[string]*typeInfo{}
		x.idents[dir] = map[string]bool{}
	}
	ti := x.types[dir][name]
	if ti == nil {
		ti = &typeInfo{members: map[string]bool{}}
		x.types[dir][name] = ti
	}
	return ti
}

func (x *apiIndex) addFile(dir string, f *ast.File) {
	x.typ(dir, "")                 // makes the maps of dir
	imports := map[string]string{} // local name -> directory of a module package
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		rel, ok := strings.CutPrefix(path, module)
		if !ok || (rel != "" && rel[0] != '/') {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = strings.TrimPrefix(rel, "/")
	}
	// ref resolves a type expression to a type of the module, if it is one.
	var ref func(e ast.Expr) (typeRef, bool)
	ref = func(e ast.Expr) (typeRef, bool) {
		switch e := e.(type) {
		case *ast.Ident:
			return typeRef{dir, e.Name}, true
		case *ast.StarExpr:
			return ref(e.X)
		case *ast.IndexExpr:
			return ref(e.X)
		case *ast.IndexListExpr:
			return ref(e.X)
		case *ast.SelectorExpr:
			if id, ok := e.X.(*ast.Ident); ok {
				if d, ok := imports[id.Name]; ok {
					return typeRef{d, e.Sel.Name}, true
				}
			}
		}
		return typeRef{}, false
	}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Recv == nil {
				x.idents[dir][decl.Name.Name] = true
				continue
			}
			if r, ok := ref(decl.Recv.List[0].Type); ok {
				x.typ(r.dir, r.name).members[decl.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				switch spec := spec.(type) {
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						x.idents[dir][n.Name] = true
					}
				case *ast.TypeSpec:
					x.idents[dir][spec.Name.Name] = true
					ti := x.typ(dir, spec.Name.Name)
					switch tt := spec.Type.(type) {
					case *ast.StructType:
						for _, fld := range tt.Fields.List {
							for _, n := range fld.Names {
								ti.members[n.Name] = true
							}
							if len(fld.Names) == 0 {
								if r, ok := ref(fld.Type); ok {
									ti.members[r.name] = true
									ti.from = append(ti.from, r)
								}
							}
						}
					case *ast.InterfaceType:
						for _, m := range tt.Methods.List {
							for _, n := range m.Names {
								ti.members[n.Name] = true
							}
							if len(m.Names) == 0 {
								if r, ok := ref(m.Type); ok {
									ti.from = append(ti.from, r)
								}
							}
						}
					default:
						if r, ok := ref(spec.Type); ok {
							ti.from = append(ti.from, r)
						}
					}
				}
			}
		}
	}
}

// hasMember reports whether the type has a field or method of that name, its own or promoted.
func (x *apiIndex) hasMember(r typeRef, member string, depth int) bool {
	ti := x.types[r.dir][r.name]
	if ti == nil || depth > 8 {
		return false
	}
	if ti.members[member] {
		return true
	}
	return slices.ContainsFunc(ti.from, func(f typeRef) bool { return x.hasMember(f, member, depth+1) })
}

// isType reports whether dir declares the type name.
func (x *apiIndex) isType(dir, name string) bool {
	_, ok := x.types[dir][name]
	return ok && x.idents[dir][name]
}

// docRef finds the Go names a doc cites in code spans: pkg.Ident and pkg.Type.Member (pkg a
// package name, "gorxe" for the root, or a path in the module such as cm/rdmacm), and
// Type.Member for a type of the module.
var docRef = regexp.MustCompile(`(?:^|[^\w./])((?:[a-z][a-z0-9_]*/)*[A-Za-z_]\w*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)

// check returns why ref does not resolve in the module, or "" if it does or names nothing of it.
func (x *apiIndex) check(m []string) string {
	first, second, third := m[1], m[2], m[3]
	var dirs []string
	switch {
	case strings.Contains(first, "/"):
		dirs = []string{first}
		if x.idents[first] == nil {
			return "the module has no package " + first
		}
	case first == "gorxe":
		dirs = []string{""}
	case first[0] >= 'a' && first[0] <= 'z':
		dirs = x.dirs[first]
		if len(dirs) == 0 {
			return "" // not a package of the module: the standard library's or another module's
		}
	default: // Type.Member: a type of any package of the module, as the doc's context says which
		found := false
		for dir := range x.types {
			if x.isType(dir, first) {
				found = true
				if x.hasMember(typeRef{dir, first}, second, 0) {
					return ""
				}
			}
		}
		if found {
			return "no type " + first + " of the module has a field or method " + second
		}
		return ""
	}
	for _, dir := range dirs {
		if !x.idents[dir][second] {
			continue
		}
		if third == "" || x.hasMember(typeRef{dir, second}, third, 0) {
			return ""
		}
		return first + "." + second + " has no field or method " + third
	}
	if x.std(first, second) {
		return "" // a standard package of the same name as one of the module's (runtime)
	}
	return "no package " + first + " of the module declares " + second
}

// std reports whether the standard library's package at GOROOT/src/pkg declares ident.
func (x *apiIndex) std(pkg, ident string) bool {
	pkgs, err := parseSources(token.NewFileSet(), filepath.Join(build.Default.GOROOT, "src", pkg))
	if err != nil {
		return false
	}
	sx := &apiIndex{idents: map[string]map[string]bool{}, types: map[string]map[string]*typeInfo{}}
	for _, files := range pkgs {
		for _, f := range files {
			sx.addFile(pkg, f)
		}
	}
	return sx.idents[pkg][ident]
}

// fencedBlock matches a fenced code block of Markdown, whose Go is examples, not citations.
var fencedBlock = regexp.MustCompile("(?ms)^```.*?^```")

// codeSpan matches an inline code span.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// TestDocsCiteExistingNames checks that every Go name the README and docs/*.md cite in a code
// span exists in the module, so that a rename or removal cannot leave a doc pointing at nothing.
func TestDocsCiteExistingNames(t *testing.T) {
	x := indexModule(t, ".")
	require.Contains(t, x.dirs["gorxe"], "", "the root package is indexed")
	files, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	files = append([]string{"README.md"}, files...)
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		text := fencedBlock.ReplaceAllString(string(b), "")
		for _, span := range codeSpan.FindAllStringSubmatch(text, -1) {
			for _, m := range docRef.FindAllStringSubmatch(span[1], -1) {
				checked++
				if why := x.check(m); why != "" {
					assert.Fail(t, file+": `"+span[1]+"`: "+why)
				}
			}
		}
	}
	assert.Greater(t, checked, 50, "the docs cite names in code spans")
}
