//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gorxe/gorxe/internal/clibtest"
)

// prepareC readies the C perftest rows among the selected cases: it finds perftest's binaries
// and builds gorxe's C library (make clib into the working directory, every run, so that the
// rows measure the tree being reported on; the build cache makes that quick) unless -clib names
// one. What the machine lacks for them goes into r.cSkip, and a build that failed into r.cErr.
func (r *runner) prepareC(ctx context.Context, o *options, cases []benchCase) {
	r.cTools = map[string]string{}
	want := false
	for _, c := range cases {
		if !c.cPerftest || (o.run != nil && !o.run.MatchString(c.id())) {
			continue
		}
		want = true
		if p, err := exec.LookPath(c.tool()); err == nil {
			r.cTools[c.tool()] = p
		}
	}
	if !want || len(r.cTools) == 0 {
		return
	}
	if o.clibDir != "" {
		dir, err := filepath.Abs(o.clibDir)
		if err == nil {
			_, err = os.Stat(filepath.Join(dir, clibFile))
		}
		if err != nil {
			r.cErr = fmt.Errorf("-clib: %w", err)
		}
		r.clibDir = dir
		return
	}
	if why := clibtest.Missing(); why != "" {
		r.cSkip = "gorxe's C library cannot be built here: " + why
		return
	}
	root, err := moduleRoot(ctx, o.goBin)
	if err != nil {
		r.cErr = err
		return
	}
	r.clibDir = filepath.Join(r.workDir, "clib")
	progress("building gorxe's C library (make clib)")
	if err := clibtest.Build(root, r.clibDir); err != nil {
		r.cErr = err
	}
}

// clibFile is the library's file in its directory, which LD_LIBRARY_PATH names.
const clibFile = "libibverbs.so.1"

// cSkipReason says why the C case cannot run on this machine, or "" when it can.
func (r *runner) cSkipReason(c benchCase) string {
	if _, ok := r.cTools[c.tool()]; !ok {
		return c.tool() + " is not installed (perftest)"
	}
	return r.cSkip
}

// moduleRoot is the directory of gorxe's go.mod, where make clib runs.
func moduleRoot(ctx context.Context, goBin string) (string, error) {
	out, err := exec.CommandContext(ctx, goBin, "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("not inside gorxe's module: make clib needs its source tree")
	}
	return filepath.Dir(mod), nil
}
