package gorxe

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"reflect"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The structs users fill in or read are defined in the internal packages and named here by
// aliases, which go doc shows without their fields; each alias's comment names every field
// instead. This test keeps those comments complete when a field is added below.
func TestAliasDocsNameEveryField(t *testing.T) {
	structs := map[string]reflect.Type{
		"QPAttr": reflect.TypeFor[QPAttr](), "QPCap": reflect.TypeFor[QPCap](),
		"AHAttr": reflect.TypeFor[AHAttr](), "GlobalRoute": reflect.TypeFor[GlobalRoute](),
		"SendWR": reflect.TypeFor[SendWR](), "RecvWR": reflect.TypeFor[RecvWR](),
		"RDMAInfo": reflect.TypeFor[RDMAInfo](), "AtomicInfo": reflect.TypeFor[AtomicInfo](),
		"UDInfo": reflect.TypeFor[UDInfo](), "FlushInfo": reflect.TypeFor[FlushInfo](),
		"MWBind": reflect.TypeFor[MWBind](), "FastReg": reflect.TypeFor[FastReg](),
		"SRQAttr": reflect.TypeFor[SRQAttr](), "WC": reflect.TypeFor[WC](), "SGE": reflect.TypeFor[SGE](),
		"BufferOptions": reflect.TypeFor[BufferOptions](), "FaultConfig": reflect.TypeFor[FaultConfig](),
		"Datagram": reflect.TypeFor[Datagram](), "NetworkCounters": reflect.TypeFor[NetworkCounters](),
	}
	docs := map[string]string{}
	// The package's files as the build sees them (build tags and file names applied), without
	// its tests.
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				ts := spec.(*ast.TypeSpec)
				if !ts.Assign.IsValid() {
					continue
				}
				docs[ts.Name.Name] = g.Doc.Text() + ts.Doc.Text()
			}
		}
	}
	for name, typ := range structs {
		doc, ok := docs[name]
		require.True(t, ok, "%s is not an alias of this package", name)
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			assert.Regexp(t, regexp.MustCompile(`\b`+f.Name+`\b`), doc, "the comment of %s does not name its field %s", name, f.Name)
		}
	}
}
