package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// TestLookPath: a name without a slash is looked up on $PATH, "." included as a shell does; one
// with a slash is the file itself. A program that is not there is 127, one that cannot run 126.
func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "plain"), "")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prog"), []byte("#!/bin/sh\n"), 0o755))
	t.Chdir(dir)
	t.Setenv("PATH", ".:/nonexistent")

	path, err := lookPath("prog")
	require.NoError(t, err)
	assert.Equal(t, "prog", path, "found through the PATH entry .")
	path, err = lookPath(filepath.Join(dir, "prog"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "prog"), path)

	tests := []struct {
		name   string
		status int
		err    string
	}{
		{"nosuch", 127, "nosuch: command not found"},
		{"plain", 127, "plain: command not found"}, // on PATH only as an executable
		{"./nosuch", 127, "./nosuch: no such file or directory"},
		{"./plain", 126, "./plain: permission denied"},
		{"/", 126, "/: is a directory"},
		{"./plain/x", 126, "./plain/x: not a directory"},
	}
	for _, tc := range tests {
		_, err := lookPath(tc.name)
		se, ok := err.(*tool.StatusError)
		if assert.True(t, ok, "%s: %v", tc.name, err) {
			assert.Equal(t, tc.status, se.Status, tc.name)
		}
		assert.EqualError(t, err, tc.err, tc.name)
	}
}

// TestPrepare: the address is checked (--addr, else the environment's GORXE_ADDR), the library
// found and the program looked up, and the program gets the environment with both set.
func TestPrepare(t *testing.T) {
	lib := t.TempDir()
	writeFile(t, filepath.Join(lib, libFile), "")
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	getenv := func(env map[string]string) func(string) string { return func(k string) string { return env[k] } }

	tests := []struct {
		name string
		o    options
		env  map[string]string
		want launch
		err  string
	}{
		{"--addr", options{addr: "127.0.0.2", lib: lib, argv: []string{"sh", "-c", "true"}}, map[string]string{"GORXE_ADDR": "nosuch0"},
			launch{path: sh, argv: []string{"sh", "-c", "true"}, env: []string{"HOME=/h", "LD_LIBRARY_PATH=" + lib, "GORXE_ADDR=127.0.0.2"}}, ""},
		{"GORXE_ADDR and GORXE_LIB", options{argv: []string{"sh"}}, map[string]string{"GORXE_ADDR": "lo", "GORXE_LIB": lib},
			launch{path: sh, argv: []string{"sh"}, env: []string{"HOME=/h", "LD_LIBRARY_PATH=" + lib}}, ""},
		{"bad GORXE_ADDR", options{lib: lib, argv: []string{"sh"}}, map[string]string{"GORXE_ADDR": "nosuch0"}, launch{},
			"GORXE_ADDR=nosuch0: no interface of this host is called that, and it is no IP address"},
		{"bad --addr", options{addr: "198.51.100.7", lib: lib, argv: []string{"sh"}}, nil, launch{},
			"--addr 198.51.100.7: no interface of this host has the address 198.51.100.7"},
		{"no library", options{argv: []string{"sh"}}, nil, launch{},
			"gorxe's libibverbs.so.1 not found (it is in none of /nonexistent): run make clib in gorxe's source tree, or give its directory with --lib or GORXE_LIB"},
		{"no program", options{lib: lib, argv: []string{"nosuch-gorxe-program"}}, nil, launch{},
			"nosuch-gorxe-program: command not found"},
	}
	for _, tc := range tests {
		got, err := tc.o.prepare([]string{"HOME=/h"}, getenv(tc.env), []string{"/nonexistent"})
		if tc.err != "" {
			assert.EqualError(t, err, tc.err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
}
