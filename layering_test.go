package gorxe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/gorxe/gorxe"

// layers orders the module's packages from the bottom: a package may import only packages of
// lower layers (the tools, at the top, may also import each other). A new package must be added
// here, which is the moment to decide where it sits.
var layers = [][]string{
	{"packet", "counter", "clock", "internal/netdev", "cm/mad"},
	{"cq", "mr", "netio", "layers"},
	{"qp", "capture"},
	{"transport", "dump"},
	{"internal/runtime"},
	{""}, // the root package: the verbs facade
	{"cm", "internal/fabrictest", "internal/devselect"}, // built on the verbs facade: the connection manager, test exchanges, device selection
	{"cm/rdmacm"}, // RDMA-CM: the connection manager run on a device's QP1
	{"metrics"},   // the Prometheus exporter of devices and their connection managers
	{"clib"},      // the C library (libibverbs.so.1, librdmacm.so.1): one more user of the public API, see clibImports
}

// clibImports are the only packages of the module the C library may import: it is built on the
// public verbs API and RDMA-CM like any other program, never on the engine behind them (cm and
// cm/mad only for the types cm/rdmacm's API returns: reject reasons, SIDR statuses, port spaces).
var clibImports = []string{module, module + "/cm", module + "/cm/mad", module + "/cm/rdmacm", module + "/internal/devselect"}

// rootLayer is the layer of the verbs facade; only the layers above it may import it.
var rootLayer = slices.IndexFunc(layers, func(l []string) bool { return slices.Contains(l, "") })

// toolLayer is the layer of the commands, the tools they ship and the test programs.
var toolLayer = len(layers)

func layerOf(rel string) (int, bool) {
	for i, l := range layers {
		if slices.Contains(l, rel) {
			return i, true
		}
	}
	if rel == "cmd" || strings.HasPrefix(rel, "cmd/") || strings.HasPrefix(rel, "test/") || strings.HasPrefix(rel, "clib/internal/") {
		return toolLayer, true
	}
	return 0, false
}

type listedPkg struct {
	ImportPath string
	Standard   bool
	Imports    []string
}

// modulePackages lists the module's packages and the set of standard library packages among
// their dependencies, from go list (no test imports), with the C library's files included (they
// are built only with the gorxe_clib tag).
func modulePackages(t *testing.T) ([]listedPkg, map[string]bool) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list packages with")
	}
	out, err := exec.Command(goTool, "list", "-tags", "gorxe_clib", "-deps", "-json", "./...").Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		require.Fail(t, fmt.Sprintf("go list: %v\n%s", err, ee.Stderr))
	}
	require.NoError(t, err)
	std := map[string]bool{}
	var mine []listedPkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		if p.Standard {
			std[p.ImportPath] = true
		}
		if p.ImportPath == module || strings.HasPrefix(p.ImportPath, module+"/") {
			mine = append(mine, p)
		}
	}
	return mine, std
}

// TestImportGraph enforces the layering of docs/architecture.md.
func TestImportGraph(t *testing.T) {
	pkgs, std := modulePackages(t)
	require.NotEmpty(t, pkgs)
	sansIO := []string{"transport", "qp", "cq", "mr"}
	forbiddenInSansIO := []string{"log", "log/slog", module + "/netio", module + "/clock", module + "/internal/runtime", module}
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		layer, known := layerOf(rel)
		if !assert.True(t, known, "package %q is in no layer of the import graph test: add it to layers", p.ImportPath) {
			continue
		}
		for _, imp := range p.Imports {
			switch {
			case rel == "packet" && !std[imp]:
				assert.Fail(t, fmt.Sprintf("packet imports %s: it may import only the standard library", imp))
			case slices.Contains(sansIO, rel) && slices.Contains(forbiddenInSansIO, imp):
				assert.Fail(t, fmt.Sprintf("%s imports %s: the sans-I/O core takes time and packets as arguments", rel, imp))
			case imp == module && layer <= rootLayer:
				assert.Fail(t, fmt.Sprintf("%s imports the root package: only what is built on the facade (cm, commands, tools, tests, examples) may", rel))
			}
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if rel == "clib" {
				assert.Contains(t, clibImports, imp, "clib imports %s: the C library is built on the public API (%v) only", imp, clibImports)
			}
			irel := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			il, ok := layerOf(irel)
			if !ok {
				continue // reported as a package of its own
			}
			assert.LessOrEqual(t, il, layer, "%s (layer %d) imports %s (layer %d): imports point down the layers only", p.ImportPath, layer, imp, il)
			assert.False(t, il == layer && layer != toolLayer, "%s (layer %d) imports %s (layer %d): imports point down the layers only", p.ImportPath, layer, imp, il)
		}
	}
}
