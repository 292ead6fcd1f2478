package main

import (
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

//go:embed init.sh
var initScript []byte

// guestModules are the modules /init loads; their dependencies are added in the order modprobe
// gives. crc32_generic is named because rxe looks the crc32 algorithm up by name when the device is
// created, which no dependency records.
var guestModules = []string{
	"crc32_generic", "configfs", "rdma_rxe", "ib_uverbs", "rdma_ucm", "virtio_pci", "virtio_net",
}

// guestTools are the binaries the VM runs, with every library they load.
var guestTools = []string{
	"/usr/bin/ibv_rc_pingpong", "/usr/bin/ibv_uc_pingpong", "/usr/bin/ibv_ud_pingpong",
	"/usr/bin/ibv_srq_pingpong", "/usr/bin/ibv_devinfo",
	"/usr/bin/ib_write_bw", "/usr/bin/ib_read_bw", "/usr/bin/ib_send_bw", "/usr/bin/ib_atomic_bw",
	"/usr/bin/ib_write_lat", "/usr/bin/ib_read_lat", "/usr/bin/ib_send_lat", "/usr/bin/ib_atomic_lat",
	"/usr/bin/rping", "/usr/bin/ucmatose", "/usr/bin/udaddy", "/usr/bin/rdma_server", "/usr/bin/rdma_client",
	"/usr/bin/mckey", "/usr/bin/cmtime", "/usr/bin/rdma",
}

// guestFiles are loaded at run time rather than linked, so ldd does not list them: the rxe
// provider, its driver file, and libgcc_s (glibc loads it for pthread_exit).
var guestFiles = []string{
	"/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so",
	"/etc/libibverbs.d/rxe.driver",
	"/usr/lib/x86_64-linux-gnu/libgcc_s.so.1",
}

// buildInitramfs stages the guest's root file system under cache and packs it as an uncompressed
// newc cpio archive (nothing to decompress in an emulated CPU), returning the archive's path.
func buildInitramfs(log *logger, cache, repo string, k kernel) (string, error) {
	stage := filepath.Join(cache, "initramfs")
	if err := os.RemoveAll(stage); err != nil {
		return "", err
	}
	for _, d := range []string{"bin", "usr/bin", "usr/sbin", "usr/lib/x86_64-linux-gnu", "usr/lib64",
		"etc", "proc", "sys", "dev", "tmp", "modules"} {
		if err := os.MkdirAll(filepath.Join(stage, d), 0o755); err != nil {
			return "", err
		}
	}
	for link, target := range map[string]string{"lib": "usr/lib", "lib64": "usr/lib64", "sbin": "bin"} {
		if err := os.Symlink(target, filepath.Join(stage, link)); err != nil {
			return "", err
		}
	}
	if err := stageBusybox(stage); err != nil {
		return "", err
	}
	if err := stageModules(stage, k); err != nil {
		return "", err
	}
	libs := map[string]bool{}
	for _, f := range append(append([]string{}, guestTools...), guestFiles...) {
		if err := copyFile(f, stagePath(stage, f), 0o755); err != nil {
			return "", err
		}
		if strings.HasSuffix(f, ".driver") {
			continue
		}
		deps, err := sharedLibraries(f)
		if err != nil {
			return "", err
		}
		for _, d := range deps {
			libs[d] = true
		}
	}
	for l := range libs {
		if err := copyFile(l, stagePath(stage, l), 0o755); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(stage, "init"), initScript, 0o755); err != nil {
		return "", err
	}
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(stage, "agent"), "./test/interop/agent")
	build.Dir = repo
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the guest agent: %w\n%s", err, out)
	}
	archive := filepath.Join(cache, "initramfs.cpio")
	pack := exec.Command("sh", "-c", "find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 > "+archive)
	pack.Dir = stage
	if out, err := pack.CombinedOutput(); err != nil {
		return "", fmt.Errorf("packing the initramfs: %w\n%s", err, out)
	}
	st, err := os.Stat(archive)
	if err != nil {
		return "", err
	}
	log.printf("initramfs %s: %d MiB, %d libraries, kernel %s", archive, st.Size()>>20, len(libs), k.Release)
	return archive, nil
}

// stagePath maps a host path into the stage, moving /lib and /lib64 under /usr as the stage's
// merged layout has them.
func stagePath(stage, p string) string {
	for _, top := range []string{"/lib/", "/lib64/", "/bin/", "/sbin/"} {
		if strings.HasPrefix(p, top) {
			p = "/usr" + p
			break
		}
	}
	return filepath.Join(stage, p)
}

func stageBusybox(stage string) error {
	const bb = "/bin/busybox"
	if err := copyFile(bb, filepath.Join(stage, "bin/busybox"), 0o755); err != nil {
		return err
	}
	list, err := output(bb, "--list")
	if err != nil {
		return err
	}
	for _, applet := range strings.Fields(list) {
		if applet == "busybox" || strings.Contains(applet, "/") {
			continue
		}
		if err := os.Symlink("busybox", filepath.Join(stage, "bin", applet)); err != nil {
			return err
		}
	}
	return nil
}

// insmodRE matches one line of `modprobe --show-depends`.
var insmodRE = regexp.MustCompile(`(?m)^insmod (\S+\.ko)\s*$`)

// stageModules copies guestModules and their dependencies, and writes /modules/order, the load
// order /init follows.
func stageModules(stage string, k kernel) error {
	if _, err := output("depmod", "-b", k.Root, k.Release); err != nil {
		return err
	}
	var order []string
	seen := map[string]bool{}
	for _, m := range guestModules {
		out, err := output("modprobe", "-d", k.Root, "-S", k.Release, "--show-depends", m)
		if err != nil {
			return err
		}
		matches := insmodRE.FindAllStringSubmatch(out, -1)
		if len(matches) == 0 {
			return fmt.Errorf("modprobe --show-depends %s: no module file in:\n%s", m, out)
		}
		for _, mm := range matches {
			name := strings.TrimSuffix(filepath.Base(mm[1]), ".ko")
			if seen[name] {
				continue
			}
			seen[name] = true
			order = append(order, name)
			if err := copyFile(mm[1], filepath.Join(stage, "modules", name+".ko"), 0o644); err != nil {
				return err
			}
		}
	}
	return os.WriteFile(filepath.Join(stage, "modules", "order"), []byte(strings.Join(order, "\n")+"\n"), 0o644)
}

// lddRE matches the library paths in ldd's output: "name => /path (addr)" and "/path (addr)".
var lddRE = regexp.MustCompile(`(?m)(?:=>\s+|^\s+)(/\S+)\s+\(0x`)

// sharedLibraries lists every library ldd says file loads.
func sharedLibraries(file string) ([]string, error) {
	out, err := output("ldd", file)
	if err != nil {
		return nil, err
	}
	var libs []string
	for _, m := range lddRE.FindAllStringSubmatch(out, -1) {
		libs = append(libs, m[1])
	}
	if len(libs) == 0 {
		return nil, fmt.Errorf("ldd %s lists no libraries:\n%s", file, out)
	}
	return libs, nil
}

// copyFile copies src (following symlinks) to dst, creating dst's directory.
func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
