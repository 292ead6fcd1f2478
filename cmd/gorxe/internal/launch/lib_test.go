package launch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFile creates the file at path, with its directories.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// TestLibPlaces: beside the executable (its symlinks resolved) ../build/clib and ../lib/gorxe,
// then build/clib of the gorxe source tree the current directory is in, found by its go.mod.
func TestLibPlaces(t *testing.T) {
	root := t.TempDir()
	tree := filepath.Join(root, "src", "gorxe")
	writeFile(t, filepath.Join(tree, "go.mod"), "// gorxe\nmodule github.com/gorxe/gorxe\n\ngo 1.26\n")
	writeFile(t, filepath.Join(tree, "bin", "gorxe"), "")
	// A module of its own inside the tree, as a test program's, is not gorxe's.
	writeFile(t, filepath.Join(tree, "test", "other", "go.mod"), "module example.com/other\n")
	writeFile(t, filepath.Join(root, "other", "go.mod"), "module \"github.com/gorxe/gorxe/v2\"\n")
	installed := filepath.Join(root, "usr", "bin", "gorxe")
	writeFile(t, installed, "")
	link := filepath.Join(root, "link", "gorxe")
	require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
	require.NoError(t, os.Symlink(installed, link))

	tests := []struct {
		name, exe, cwd string
		want           []string
	}{
		{"make build in the tree", filepath.Join(tree, "bin", "gorxe"), filepath.Join(tree, "test", "other"),
			[]string{filepath.Join(tree, "build", "clib"), filepath.Join(tree, "lib", "gorxe")}},
		{"installed, run elsewhere", installed, filepath.Join(root, "other"),
			[]string{filepath.Join(root, "usr", "build", "clib"), filepath.Join(root, "usr", "lib", "gorxe")}},
		{"installed, run in the tree", installed, filepath.Join(tree, "bin"), []string{filepath.Join(root, "usr", "build", "clib"),
			filepath.Join(root, "usr", "lib", "gorxe"), filepath.Join(tree, "build", "clib")}},
		{"through a symlink", link, "",
			[]string{filepath.Join(root, "usr", "build", "clib"), filepath.Join(root, "usr", "lib", "gorxe")}},
		{"go run in the tree", "", filepath.Join(tree, "bin"), []string{filepath.Join(tree, "build", "clib")}},
		{"nowhere", "", root, nil},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, libPlaces(tc.exe, tc.cwd), tc.name)
	}
}

// TestFindLib: --lib wins over GORXE_LIB, which wins over the places; a directory named by
// either must hold the library; the first place that holds it wins; the path is absolute.
func TestFindLib(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	for _, d := range []string{"a", "b", "c"} {
		writeFile(t, filepath.Join(root, d, libFile), "")
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dir", libFile), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "empty"), 0o755))
	abs := func(d string) string { return filepath.Join(root, d) }

	tests := []struct {
		name, flag, env string
		places          []string
		want, err       string
	}{
		{"--lib", "a", "b", []string{"c"}, abs("a"), ""},
		{"GORXE_LIB", "", "b", []string{"c"}, abs("b"), ""},
		{"first place holding it", "", "", []string{abs("empty"), abs("nosuch"), abs("c"), abs("a")}, abs("c"), ""},
		{"--lib without it", "empty", "b", nil, "", "--lib empty: no libibverbs.so.1 there (make clib writes it to build/clib)"},
		{"GORXE_LIB without it", "", abs("nosuch"), []string{abs("a")}, "",
			"GORXE_LIB=" + abs("nosuch") + ": no libibverbs.so.1 there (make clib writes it to build/clib)"},
		{"not a file", "dir", "", nil, "", "--lib dir: libibverbs.so.1 there is not a file (make clib writes it to build/clib)"},
		{"in no place", "", "", []string{abs("empty"), abs("nosuch")}, "",
			"gorxe's libibverbs.so.1 not found (it is in none of " + abs("empty") + ", " + abs("nosuch") +
				"): run make clib in gorxe's source tree, or give its directory with --lib or GORXE_LIB"},
		{"no place", "", "", nil, "",
			"gorxe's libibverbs.so.1 not found (gorxe cannot tell where its executable is, and the current directory is " +
				"in no gorxe source tree): run make clib in gorxe's source tree, or give its directory with --lib or GORXE_LIB"},
	}
	for _, tc := range tests {
		got, err := findLib(tc.flag, tc.env, tc.places)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
}
