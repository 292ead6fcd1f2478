// Command vscript writes the version script of gorxe's C library from the installed rdma-core
// libraries (libibverbs.so.1, librdmacm.so.1) and prints libibverbs' private ABI number, so the
// library defines every version node and symbol of the ones it replaces.
//
//	vscript -o OUT.map LIBIBVERBS LIBRDMACM
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/gorxe/gorxe/clib/internal/elfabi"
)

func main() {
	out := flag.String("o", "", "the version script to write")
	flag.Parse()
	if err := run(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "vscript:", err)
		os.Exit(1)
	}
}

func run(out string, libs []string) error {
	if out == "" || len(libs) == 0 {
		return fmt.Errorf("usage: vscript -o OUT.map LIBIBVERBS [LIBRDMACM...]")
	}
	var all []elfabi.Node
	for _, l := range libs {
		nodes, err := elfabi.Exports(l)
		if err != nil {
			return fmt.Errorf("%w (the C library is built against the installed rdma-core: install libibverbs-dev and librdmacm-dev)", err)
		}
		all = append(all, nodes...)
	}
	pabi, err := elfabi.PrivateABI(all)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := elfabi.WriteScript(&b, all); err != nil {
		return err
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Println(pabi)
	return nil
}
