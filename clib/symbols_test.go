package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/clib/internal/elfabi"
	"github.com/gorxe/gorxe/internal/clibtest"
)

// TestExportsWhatRDMACoreExports compares the library with the installed libibverbs.so.1 and
// librdmacm.so.1: every version node and every symbol at its default version must be there,
// since the distribution's binaries are linked BIND_NOW and die at start on a missing one.
func TestExportsWhatRDMACoreExports(t *testing.T) {
	needLibrary(t)
	ours, err := elfabi.Exports(filepath.Join(libDir, "libibverbs.so.1"))
	require.NoError(t, err)
	have := map[string]map[string]bool{}
	for _, n := range ours {
		have[n.Name] = map[string]bool{}
		for _, s := range n.Symbols {
			have[n.Name][s] = true
		}
	}
	total := 0
	for _, lib := range []string{"libibverbs.so.1", "librdmacm.so.1"} {
		real, err := elfabi.Exports(clibtest.InstalledLib(lib))
		require.NoError(t, err)
		for _, n := range real {
			if !assert.Contains(t, have, n.Name, "version node %s of %s", n.Name, lib) {
				continue
			}
			for _, s := range n.Symbols {
				assert.True(t, have[n.Name][s], "%s@@%s (exported by the installed %s) is missing", s, n.Name, lib)
				total++
			}
		}
	}
	assert.Greater(t, total, 200, "the installed libraries export too few symbols to be rdma-core's")
}

// TestVetLibrary vets the library's Go code as make clib builds it (go vet ./... leaves it out:
// it is built only with the gorxe_clib tag).
func TestVetLibrary(t *testing.T) {
	needLibrary(t)
	vet := exec.Command("go", "vet", "-tags", "gorxe_clib", ".")
	vet.Env = append(os.Environ(), "CGO_ENABLED=1", "CGO_CFLAGS=-DGORXE_PABI=0")
	out, err := vet.CombinedOutput()
	require.NoError(t, err, "go vet -tags gorxe_clib:\n%s", out)
}
