package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// envInner marks the re-executed copy of the suite that runs inside the namespace; the outer copy
// prepares everything that needs the host's network (packages, kernel) and cleans up.
const envInner = "GORXE_INTEROP_INNER"

type options struct {
	cache     string
	run       string // regexp on "tool role options"
	baseline  string
	gorxeOnly bool
	keep      bool
	count     int // runs of each selected case
	gorxeDev  string
	// Set by the outer copy for the inner one.
	kernelRoot, kernelRelease, initrd, gorxeBin, workdir string
	// libDir holds gorxe's C library; libErr says why it could not be built.
	libDir, libErr string
}

func parseFlags() *options {
	o := &options{}
	flag.StringVar(&o.cache, "cache", "test/interop/.cache", "directory for the kernel, initramfs, binaries and run artefacts")
	flag.StringVar(&o.run, "run", "", "run only the cases whose \"tool role options\" matches this regexp")
	flag.StringVar(&o.baseline, "baseline", "full", "kernel rxe <-> kernel rxe control run: none, short (two tools) or full (every tool)")
	flag.BoolVar(&o.gorxeOnly, "skip-gorxe", false, "run only the kernel rxe <-> kernel rxe control")
	flag.BoolVar(&o.keep, "keep", false, "keep the captures of passing runs too")
	flag.IntVar(&o.count, "count", 1, "run each selected case this many times, to hunt a rare failure")
	flag.StringVar(&o.gorxeDev, "gorxe-dev", "-d "+bridgeName, "the options that select gorxe's device, space separated")
	flag.StringVar(&o.kernelRoot, "inner-kernel-root", "", "internal")
	flag.StringVar(&o.kernelRelease, "inner-kernel-release", "", "internal")
	flag.StringVar(&o.initrd, "inner-initrd", "", "internal")
	flag.StringVar(&o.gorxeBin, "inner-gorxe", "", "internal")
	flag.StringVar(&o.workdir, "inner-workdir", "", "internal")
	flag.StringVar(&o.libDir, "inner-clib", "", "internal")
	flag.StringVar(&o.libErr, "inner-clib-error", "", "internal")
	flag.Parse()
	return o
}

func main() {
	o := parseFlags()
	log := newLogger()
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "interop: FAIL: must run as root (it creates a network namespace, a bridge, taps and nftables rules)")
		os.Exit(1)
	}
	if os.Getenv(envInner) != "" {
		os.Exit(inner(log, o))
	}
	os.Exit(outer(log, o))
}

// outer prepares the artefacts, runs the suite inside a fresh network namespace and removes the
// namespace afterwards, whatever happened.
func outer(log *logger, o *options) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "interop: FAIL: "+format+"\n", args...)
		return 1
	}
	repo, err := repoRoot()
	if err != nil {
		return fail("%v", err)
	}
	if !filepath.IsAbs(o.cache) {
		o.cache = filepath.Join(repo, o.cache)
	}
	prepStart := time.Now()
	if err := ensurePackages(log); err != nil {
		return fail("installing packages: %v", err)
	}
	k, err := ensureKernel(log, o.cache)
	if err != nil {
		return fail("kernel: %v", err)
	}
	initrd, err := buildInitramfs(log, o.cache, repo, k)
	if err != nil {
		return fail("initramfs: %v", err)
	}
	gorxeBin := filepath.Join(o.cache, "gorxe")
	if out, err := runIn(repo, nil, "go", "build", "-o", gorxeBin, "./cmd/gorxe"); err != nil {
		return fail("building gorxe: %v\n%s", err, out)
	}
	// A library that does not build fails its cases in the table rather than the whole suite, so
	// that the rest of the matrix still runs and reports.
	var libDir, libErr string
	if !o.gorxeOnly {
		if libDir, err = buildLibrary(repo, o.cache); err != nil {
			libErr = err.Error()
			log.printf("%s", libErr)
		}
	}
	runs := filepath.Join(o.cache, "runs")
	pruneRuns(runs, keptRuns)
	workdir := filepath.Join(runs, time.Now().Format("20060102-150405"))
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		return fail("%v", err)
	}
	log.printf("prepared in %.1fs; artefacts in %s", time.Since(prepStart).Seconds(), workdir)

	if err := createNetns(log); err != nil {
		return fail("network namespace: %v", err)
	}
	defer deleteNetns()
	self, err := os.Executable()
	if err != nil {
		return fail("%v", err)
	}
	args := append([]string{"netns", "exec", netnsName, self}, os.Args[1:]...)
	args = append(args, "-cache", o.cache,
		"-inner-kernel-root", k.Root, "-inner-kernel-release", k.Release, "-inner-initrd", initrd,
		"-inner-gorxe", gorxeBin, "-inner-workdir", workdir, "-inner-clib", libDir, "-inner-clib-error", libErr)
	cmd := exec.Command("ip", args...)
	cmd.Dir = repo
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), envInner+"=1")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		return fail("%v", err)
	}
	go func() {
		for s := range sig {
			cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() >= 0 {
		return cmd.ProcessState.ExitCode()
	}
	return fail("suite ended abnormally: %v", err)
}

// keptRuns is how many earlier runs' artefacts (consoles, failing captures) stay in the cache.
const keptRuns = 3

// pruneRuns removes all but the newest keep run directories (their names sort by time).
func pruneRuns(dir string, keep int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for i := 0; i < len(entries)-keep; i++ {
		os.RemoveAll(filepath.Join(dir, entries[i].Name()))
	}
}

// repoRoot is the module root, where go.mod is.
func repoRoot() (string, error) {
	out, err := output("go", "env", "GOMOD")
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(out)
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the gorxe module (go env GOMOD is empty); run from the repository root")
	}
	return filepath.Dir(mod), nil
}
