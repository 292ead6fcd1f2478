package elfabi

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteScript(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteScript(&b, []Node{
		{Name: "IBVERBS_1.0", Symbols: []string{"ibv_a", "ibv_b"}},
		{Name: "IBVERBS_1.5"},
		{Name: "RDMACM_1.0", Symbols: []string{"rdma_c"}},
	}))
	assert.Equal(t, `IBVERBS_1.0 {
  global:
    ibv_a;
    ibv_b;
};
IBVERBS_1.5 {
};
RDMACM_1.0 {
  global:
    rdma_c;
  local: *;
};
`, b.String())
}

func TestPrivateABI(t *testing.T) {
	n, err := PrivateABI([]Node{{Name: "IBVERBS_1.1"}, {Name: "IBVERBS_PRIVATE_34"}})
	require.NoError(t, err)
	assert.Equal(t, 34, n)
	_, err = PrivateABI([]Node{{Name: "IBVERBS_1.1"}, {Name: "IBVERBS_PRIVATE_"}})
	assert.ErrorContains(t, err, "no IBVERBS_PRIVATE_<N> version node")
}

func TestExportsNotELF(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lib.so")
	require.NoError(t, os.WriteFile(p, []byte("not an ELF file"), 0o644))
	_, err := Exports(p)
	assert.Error(t, err)
}

// TestExportsInstalledLibibverbs reads the distribution's libibverbs.so.1, when it is installed:
// its public and private nodes, the default versions of its symbols, and none of the nodes'
// own names as symbols.
func TestExportsInstalledLibibverbs(t *testing.T) {
	out, err := exec.Command("cc", "-print-file-name=libibverbs.so.1").Output()
	if err != nil {
		t.Skip("no C compiler to find libibverbs.so.1 with")
	}
	path := strings.TrimSpace(string(out))
	if _, err := os.Stat(path); err != nil {
		t.Skip("libibverbs.so.1 is not installed (libibverbs1)")
	}
	nodes, err := Exports(path)
	require.NoError(t, err)
	byName := map[string][]string{}
	for _, n := range nodes {
		byName[n.Name] = n.Symbols
		assert.NotContains(t, n.Symbols, n.Name)
		assert.True(t, slices.IsSorted(n.Symbols))
	}
	assert.Contains(t, byName["IBVERBS_1.1"], "ibv_get_device_list", "its default version")
	assert.NotContains(t, byName["IBVERBS_1.0"], "ibv_get_device_list", "a compatibility version")
	assert.Contains(t, byName["IBVERBS_1.0"], "ibv_create_comp_channel")
	_, err = PrivateABI(nodes)
	assert.NoError(t, err)
}
