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
	// internal/clibtest runs make clib for the tests of C programs; it imports only the standard library.
	{"packet", "counter", "clock", "internal/netdev", "cm/mad", "internal/clibtest"},
	{"cq", "mr", "netio", "layers", "cm"}, // cm: the connection manager's sans-I/O state machine
	{"qp", "capture"},
	{"transport", "dump"},
	{"internal/stack"},                            // answers CM MADs with cm while the device has no GSI QP
	{""},                                          // the root package: the verbs facade
	{"internal/fabrictest", "internal/devselect"}, // built on the verbs facade: test exchanges, device selection
	{"cm/rdmacm"},                                 // RDMA-CM: the connection manager run on a device's QP1
	{"metrics"},                                   // the Prometheus exporter of devices and their connection managers
	{"clib"},                                      // the C library (libibverbs.so.1, librdmacm.so.1): one more user of the public API, see clibImports
}

// clibImports are the only packages of the module the C library may import: it is built on the
// public verbs API and RDMA-CM like any other program, never on the engine behind them (cm and
// cm/mad only for the types cm/rdmacm's API returns: reject reasons, SIDR statuses, port spaces).
var clibImports = []string{module, module + "/cm", module + "/cm/mad", module + "/cm/rdmacm", module + "/internal/devselect"}

// rootLayer is the layer of the verbs facade; only the layers above it may import it.
var rootLayer = slices.IndexFunc(layers, func(l []string) bool { return slices.Contains(l, "") })

// toolLayer is the layer of the commands, the tools they ship and the test programs.
var toolLayer = len(layers)

// toolShared are the packages gorxe's tools share, under the tools of cmd/gorxe/internal: the
// runner with the common options and session (tool), and the helpers behind them. They import
// none of the tools, so that every tool can use each of them.
var toolShared = []string{
	"cmd/gorxe/internal/tool", "cmd/gorxe/internal/getopt", "cmd/gorxe/internal/loglevel",
	"cmd/gorxe/internal/faultnote", "cmd/gorxe/internal/observe",
	"cmd/gorxe/internal/oob", "cmd/gorxe/internal/gidtext",
}

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
	std := map[string]bool{}
	var mine []listedPkg
	for _, p := range goListDeps(t, "-tags", "gorxe_clib", "./...") {
		if p.Standard {
			std[p.ImportPath] = true
		}
		if p.ImportPath == module || strings.HasPrefix(p.ImportPath, module+"/") {
			mine = append(mine, p)
		}
	}
	return mine, std
}

// goListDeps returns go list -deps -json with args (flags, then patterns): the packages named and
// everything they import, without test imports.
func goListDeps(t *testing.T, args ...string) []listedPkg {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list packages with")
	}
	out, err := exec.Command(goTool, append([]string{"list", "-deps", "-json"}, args...)...).Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		require.Fail(t, fmt.Sprintf("go list: %v\n%s", err, ee.Stderr))
	}
	require.NoError(t, err)
	var pkgs []listedPkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs
		} else {
			require.NoError(t, err)
		}
		pkgs = append(pkgs, p)
	}
}

// TestImportGraph enforces the layering of docs/architecture.md.
func TestImportGraph(t *testing.T) {
	pkgs, std := modulePackages(t)
	require.NotEmpty(t, pkgs)
	sansIO := []string{"transport", "qp", "cq", "mr", "cm"}
	forbiddenInSansIO := []string{"log", "log/slog", module + "/netio", module + "/clock", module + "/internal/stack", module}
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
			assert.False(t, slices.Contains(toolShared, rel) && strings.HasPrefix(irel, "cmd/") && !slices.Contains(toolShared, irel),
				"%s, shared by the tools, imports the tool %s", rel, irel)
		}
	}
}

// heavyModules are the dependencies a program that embeds gorxe must not link unless it asks for
// them: the pcapng writer and decoders (gopacket, behind capture, dump and layers) and the
// Prometheus client (behind metrics).
var heavyModules = []string{"github.com/gopacket/gopacket", "github.com/prometheus/"}

// TestRootDependencies checks that the verbs facade pulls in neither gopacket nor Prometheus: a
// program that captures nothing and exports no metrics links neither. It names the chain of
// imports that leads to a forbidden package.
func TestRootDependencies(t *testing.T) {
	imports := map[string][]string{}
	for _, p := range goListDeps(t, ".") {
		imports[p.ImportPath] = p.Imports
	}
	require.Contains(t, imports, module, "go list -deps lists the root itself")
	// Breadth first from the root, so the chain reported for a package is a shortest one.
	via := map[string]string{module: ""}
	queue := []string{module}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range imports[p] {
			if _, seen := via[imp]; !seen {
				via[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	for p := range via {
		if !slices.ContainsFunc(heavyModules, func(m string) bool { return strings.HasPrefix(p, m) }) {
			continue
		}
		chain := []string{p}
		for q := via[p]; q != ""; q = via[q] {
			chain = append(chain, q)
		}
		slices.Reverse(chain)
		assert.Fail(t, fmt.Sprintf("the root package depends on %s (%s): keep it behind the packages that need it", p, strings.Join(chain, " -> ")))
	}
}
