// Package elfabi reads the exported interface of a shared library (its version nodes and the
// functions and data each node exports) and writes the linker version script that gives another
// library the same interface.
package elfabi

import (
	"debug/elf"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
)

// Node is one version node of a library (readelf -V's "Version definition"): the symbols it
// exports as their default version, sorted.
type Node struct {
	Name    string
	Symbols []string
}

// Exports lists the version nodes a library defines, in the order it defines them, each with the
// symbols whose default version it is. Non-default (compatibility, "@" rather than "@@") versions
// of a symbol are left out: a library built from Go exports one version per name.
func Exports(path string) ([]Node, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	defs, err := f.DynamicVersions()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var nodes []Node
	byIndex := map[uint16]int{}
	for _, d := range defs {
		if d.Flags&elf.VER_FLG_BASE != 0 {
			continue // the file's own name, not a node
		}
		byIndex[d.Index] = len(nodes)
		nodes = append(nodes, Node{Name: d.Name})
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF || !s.HasVersion || s.VersionIndex.IsHidden() {
			continue
		}
		if b := elf.ST_BIND(s.Info); b != elf.STB_GLOBAL && b != elf.STB_WEAK {
			continue
		}
		i, ok := byIndex[s.VersionIndex.Index()]
		if !ok || s.Name == nodes[i].Name {
			continue // the absolute symbol naming the node itself
		}
		nodes[i].Symbols = append(nodes[i].Symbols, s.Name)
	}
	for i := range nodes {
		slices.Sort(nodes[i].Symbols)
	}
	return nodes, nil
}

var privateNode = regexp.MustCompile(`^IBVERBS_PRIVATE_([0-9]+)$`)

// PrivateABI returns the number of libibverbs' private ABI (the N of its IBVERBS_PRIVATE_N node,
// which providers such as libmlx5 import and register themselves with).
func PrivateABI(nodes []Node) (int, error) {
	for _, n := range nodes {
		if m := privateNode.FindStringSubmatch(n.Name); m != nil {
			return strconv.Atoi(m[1])
		}
	}
	return 0, fmt.Errorf("no IBVERBS_PRIVATE_<N> version node: not a libibverbs.so.1")
}

// WriteScript writes a GNU ld version script defining every node, each exporting its symbols,
// and making every other symbol local (the Go runtime's and cgo's exports included).
func WriteScript(w io.Writer, nodes []Node) error {
	for i, n := range nodes {
		if _, err := fmt.Fprintf(w, "%s {\n", n.Name); err != nil {
			return err
		}
		if len(n.Symbols) > 0 {
			fmt.Fprintf(w, "  global:\n")
		}
		for _, s := range n.Symbols {
			fmt.Fprintf(w, "    %s;\n", s)
		}
		if i == len(nodes)-1 {
			fmt.Fprintf(w, "  local: *;\n")
		}
		if _, err := fmt.Fprintf(w, "};\n"); err != nil {
			return err
		}
	}
	return nil
}
