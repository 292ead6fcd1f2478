package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// hostPackages are the Debian packages the suite runs: the emulator, what goes into the initramfs
// (busybox, the rdma-core and perftest tools, kmod to resolve module dependencies), the network,
// loss and capture tools on the host, and what gorxe's C library is built with: a C compiler for
// cgo and rdma-core's headers, whose version nodes the library copies.
var hostPackages = []string{
	"qemu-system-x86", "busybox-static", "cpio", "kmod", "iproute2",
	"rdma-core", "ibverbs-utils", "ibverbs-providers", "perftest", "rdmacm-utils", "libgcc-s1",
	"nftables", "tshark", "tcpdump",
	"gcc", "make", "libibverbs-dev", "librdmacm-dev",
}

// ensurePackages installs whichever hostPackages are missing. Nothing is skipped: a package that
// cannot be installed fails the suite.
func ensurePackages(log *logger) error {
	var missing []string
	for _, p := range hostPackages {
		out, err := output("dpkg-query", "-W", "-f=${Status}", p)
		if err != nil || !strings.Contains(out, "install ok installed") {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	log.printf("installing %s", strings.Join(missing, " "))
	env := []string{"DEBIAN_FRONTEND=noninteractive"}
	if _, err := outputEnv(env, "apt-get", "update", "-q"); err != nil {
		return err
	}
	args := append([]string{"install", "-y", "-q", "--no-install-recommends"}, missing...)
	_, err := outputEnv(env, "apt-get", args...)
	return err
}

// kernelPackageRE matches the versioned image package linux-image-amd64 depends on.
var kernelPackageRE = regexp.MustCompile(`Depends: (linux-image-[0-9][^\s]*-amd64)\b`)

// kernel is an unpacked Debian kernel image package.
type kernel struct {
	Release string // e.g. 6.1.0-56-amd64
	Root    string // where the package is unpacked
	Image   string // the vmlinuz path
}

// ensureKernel downloads exactly one package, the image linux-image-amd64 currently names, and
// unpacks it under cache.
func ensureKernel(log *logger, cache string) (kernel, error) {
	out, err := output("apt-cache", "depends", "linux-image-amd64")
	if err != nil {
		return kernel{}, err
	}
	m := kernelPackageRE.FindStringSubmatch(out)
	if m == nil {
		return kernel{}, fmt.Errorf("apt-cache depends linux-image-amd64 names no image package:\n%s", out)
	}
	pkg := m[1]
	release := strings.TrimPrefix(pkg, "linux-image-")
	k := kernel{
		Release: release,
		Root:    filepath.Join(cache, pkg),
	}
	k.Image = filepath.Join(k.Root, "boot", "vmlinuz-"+release)
	if _, err := os.Stat(k.Image); err == nil {
		return k, nil
	}
	dl := filepath.Join(cache, "download")
	if err := os.MkdirAll(dl, 0o755); err != nil {
		return kernel{}, err
	}
	log.printf("downloading %s", pkg)
	// The exact name, never a glob: a glob fetches every version.
	if _, err := runIn(dl, nil, "apt-get", "download", pkg); err != nil {
		return kernel{}, err
	}
	debs, _ := filepath.Glob(filepath.Join(dl, pkg+"_*.deb"))
	if len(debs) != 1 {
		return kernel{}, fmt.Errorf("apt-get download %s left %d .deb files in %s", pkg, len(debs), dl)
	}
	tmp := k.Root + ".tmp"
	os.RemoveAll(tmp)
	if _, err := output("dpkg-deb", "-x", debs[0], tmp); err != nil {
		return kernel{}, err
	}
	os.Remove(debs[0])
	if err := os.Rename(tmp, k.Root); err != nil {
		return kernel{}, err
	}
	if _, err := os.Stat(k.Image); err != nil {
		return kernel{}, fmt.Errorf("%s has no kernel image: %w", pkg, err)
	}
	return k, nil
}
