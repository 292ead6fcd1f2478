// Package clibtest builds gorxe's C library (make clib) for the tests that run programs on it, or
// says what the machine lacks to build it, so that those tests skip naming the missing package.
package clibtest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Missing says what this machine lacks to build the library, or "" when it has all of it: make
// and a C compiler, rdma-core's libraries (the version script is generated from them) and headers.
func Missing() string {
	for _, tool := range []string{"make", "cc"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " is not installed"
		}
	}
	for _, lib := range []string{"libibverbs.so.1", "librdmacm.so.1"} {
		if _, err := os.Stat(InstalledLib(lib)); err != nil {
			return lib + " is not installed (libibverbs-dev, librdmacm-dev)"
		}
	}
	check := exec.Command("cc", "-fsyntax-only", "-x", "c", "-")
	check.Stdin = strings.NewReader("#include <infiniband/verbs.h>\n#include <rdma/rdma_cma.h>\n")
	if err := check.Run(); err != nil {
		return "rdma-core's headers are not installed (libibverbs-dev, librdmacm-dev)"
	}
	return ""
}

// InstalledLib is the path of the distribution's library the compiler would link.
func InstalledLib(name string) string {
	out, err := exec.Command("cc", "-print-file-name="+name).Output()
	if err != nil {
		return name
	}
	return strings.TrimSpace(string(out))
}

// Build runs make clib in the module whose root is root, writing the library into the directory
// out (an absolute path).
func Build(root, out string) error {
	build := exec.Command("make", "-s", "-C", root, "clib", "CLIB_OUT="+out)
	if o, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("make clib: %w\n%s", err, o)
	}
	return nil
}
