package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	postPollOnce sync.Once
	postPollBin  string
	postPollErr  error
)

// buildPostPoll compiles testdata/bench_post_poll.c once, optimised as a user would build it.
func buildPostPoll(b *testing.B) string {
	b.Helper()
	postPollOnce.Do(func() {
		postPollBin = filepath.Join(tmpRoot, "bench_post_poll")
		out, err := exec.Command("cc", "-O2", "-Wall", "-Werror", "-o", postPollBin, "testdata/bench_post_poll.c",
			filepath.Join(libDir, "libibverbs.so.1")).CombinedOutput()
		if err != nil {
			postPollErr = fmt.Errorf("cc: %w: %s", err, out)
		}
	})
	require.NoError(b, postPollErr)
	return postPollBin
}

// BenchmarkPostPollC times the library's data path from C: testdata/bench_post_poll.c runs b.N
// iterations of ibv_post_send (a signaled 64-byte RDMA WRITE between two QPs of one device) and a
// busy ibv_poll_cq until its completion. ns/op and ops/s are the program's own timing of that
// loop, which leaves out the process's start, the device's opening and the QPs' set-up.
func BenchmarkPostPollC(b *testing.B) {
	needLibrary(b)
	bin := buildPostPoll(b)
	addr, _ := addressPair()
	cmd := exec.Command(bin, strconv.Itoa(b.N))
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+libDir, "GORXE_ADDR="+addr)
	out, err := cmd.Output()
	var stderr []byte
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		stderr = ee.Stderr
	}
	require.NoError(b, err, "%s\nstdout:\n%s\nstderr:\n%s", bin, out, stderr)
	var (
		iters   int
		ns, ops float64
	)
	_, err = fmt.Sscanf(string(out), "iterations %d ns/op %g ops/s %g", &iters, &ns, &ops)
	require.NoError(b, err, "output: %q", out)
	require.Equal(b, b.N, iters)
	b.ReportMetric(ns, "ns/op")
	b.ReportMetric(ops, "ops/s")
}
