package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneErrHelp: the runner's ErrHelp (tool.ErrHelp) is the only one: a command that declared
// its own, or a second name for it, would be one more way to say "help requested".
func TestOneErrHelp(t *testing.T) {
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, spec := range g.Specs {
					for _, id := range spec.(*ast.ValueSpec).Names {
						if id.Name == "ErrHelp" {
							found = append(found, filepath.ToSlash(filepath.Dir(path)))
						}
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"internal/tool"}, found)
}
