package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rdma-core's own test suite, as the distribution ships it with python3-pyverbs: the test files,
// some gzipped, and run_tests.py, which runs them all with unittest.
const pyverbsTests = "/usr/share/doc/rdma-core/tests"

// pyverbsPassFloor is how many of the suite's tests pass on the library, with the device view
// or without; fewer means something that worked broke. The rest skip: most need a vendor's device
// (mlx5, EFA), a GPU or the device's sysfs directory, or a verb gorxe does not implement.
const pyverbsPassFloor = 95

// pyverbsTimeout bounds each run of the suite (about a second on an idle machine).
const pyverbsTimeout = 5 * time.Minute

// pyverbsForked are the tests that fail under the device view, and why: test_rdmacm's setUp
// finds the device's interface and its first address there (without the view it skips), and then
// runs both sides of each connection in children of fork() of the process that loaded the
// library, which cannot call into it (its Go runtime does not survive fork). Past that they would
// meet the process model's other rule: both sides bind that same address, which two processes on
// gorxe cannot share (run in processes of their own, started by fork and exec, the second side
// gets EADDRINUSE).
var pyverbsForked = []string{
	"test_rdmacm.test_rdmacm_async_ex_leave_multicast_traffic: ERROR",
	"test_rdmacm.test_rdmacm_async_ex_multicast_traffic: ERROR",
	"test_rdmacm.test_rdmacm_async_multicast_traffic: ERROR",
	"test_rdmacm.test_rdmacm_async_read: ERROR",
	"test_rdmacm.test_rdmacm_async_reject_traffic: ERROR",
	"test_rdmacm.test_rdmacm_async_traffic: ERROR",
	"test_rdmacm.test_rdmacm_async_traffic_external_qp: ERROR",
	"test_rdmacm.test_rdmacm_async_udp_traffic: ERROR",
	"test_rdmacm.test_rdmacm_async_write: ERROR",
	"test_rdmacm.test_rdmacm_sync_traffic: ERROR",
}

// pyverbsForkMessage is what the library prints when a child of fork() calls it.
const pyverbsForkMessage = "gorxe: libibverbs cannot be used in a child of fork()"

// TestPyverbs runs rdma-core's test suite on the library, on one loopback address, and logs a
// table of its tests passed, skipped and failed per file, with the reasons for the skips: first
// as a program sees the library alone, then under gorxe exec's device view (where the machine
// allows it), where the tests that read /sys find the device. Each run fails when fewer than
// pyverbsPassFloor tests pass; the first on any failure or error, the second on any but
// pyverbsForked's.
//
// The suite picks the first non-zero GID of the first device unless told: on loopback that is
// index 0, the link-local GID derived from the MAC, which the device has no socket on. So it
// is given the device and GID index 1, the IPv4 address, as on an interface it would find.
func TestPyverbs(t *testing.T) {
	needLibrary(t)
	python := pyverbsPython(t)
	dir := pyverbsCopy(t)

	t.Run("library", func(t *testing.T) {
		addr, _ := addressPair()
		res, out := runPyverbs(t, dir, []string{"LD_LIBRARY_PATH=" + libDir, "GORXE_ADDR=" + addr},
			python, "run_tests.py", "-v", "--dev", "gorxe_"+addr, "--gid", "1")
		if !assert.Empty(t, res.failed, "failed or errored") {
			t.Logf("run_tests.py's output:\n%s", out)
		}
		assert.GreaterOrEqual(t, res.passed(), pyverbsPassFloor, "tests passed")
	})

	t.Run("device view", func(t *testing.T) {
		// The RDMA-CM tests take the first address of the device's interface, so the device is
		// 127.0.0.1, the first of lo's; the RoCE port is one of its own, as other programs on the
		// host may hold 4791 there.
		const addr = "127.0.0.1"
		port := freeUDPPort(t, addr)
		args := append(underView(t, addr), python, "run_tests.py", "-v", "--dev", "gorxe_"+addr, "--gid", "1")
		res, out := runPyverbs(t, dir, []string{"GORXE_PORT=" + strconv.Itoa(port)}, args...)
		if !assert.Equal(t, pyverbsForked, res.failed, "failed or errored") {
			t.Logf("run_tests.py's output:\n%s", out)
		}
		assert.Equal(t, 2*len(pyverbsForked), strings.Count(out, pyverbsForkMessage),
			"each side of each test in pyverbsForked stopped at fork")
		assert.GreaterOrEqual(t, res.passed(), pyverbsPassFloor, "tests passed")
	})
}

// runPyverbs runs the command args (the suite, or gorxe exec running it) in the suite's directory
// dir with env added to the test's environment, logs its table and returns its results and
// output.
func runPyverbs(t *testing.T, dir string, env []string, args ...string) (*unittestResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pyverbsTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	began := time.Now()
	out, runErr := cmd.CombinedOutput()
	t.Logf("%s: %v", strings.Join(args, " "), time.Since(began).Round(time.Millisecond))
	res, err := parseUnittest(string(out))
	require.NoError(t, err, "run_tests.py: %v\n%s", runErr, out)
	t.Log("\n" + res.table())
	if len(res.failed) == 0 {
		assert.NoError(t, runErr)
	}
	return res, string(out)
}

// freeUDPPort returns a UDP port nothing holds on addr now.
func freeUDPPort(t *testing.T, addr string) int {
	t.Helper()
	c, err := net.ListenPacket("udp", net.JoinHostPort(addr, "0"))
	require.NoError(t, err)
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// pyverbsPython returns a python3 that imports pyverbs (the distribution's, when the one on
// PATH is another), or skips.
func pyverbsPython(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(pyverbsTests, "run_tests.py")); err != nil {
		t.Skipf("rdma-core's tests are not installed (python3-pyverbs): %v", err)
	}
	var tried []string
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if err := exec.Command(path, "-c", "import pyverbs").Run(); err == nil {
			return path
		}
		tried = append(tried, path)
	}
	t.Skipf("no python3 imports pyverbs (python3-pyverbs); tried %v", tried)
	return ""
}

// pyverbsCopy copies the installed tests into a temporary directory, uncompressing the gzipped
// ones, and returns it.
func pyverbsCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(pyverbsTests)
	require.NoError(t, err)
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		src, err := os.Open(filepath.Join(pyverbsTests, e.Name()))
		require.NoError(t, err)
		var r io.Reader = src
		name := e.Name()
		if strings.HasSuffix(name, ".gz") {
			zr, err := gzip.NewReader(src)
			require.NoError(t, err, name)
			r, name = zr, strings.TrimSuffix(name, ".gz")
		}
		b, err := io.ReadAll(r)
		src.Close()
		require.NoError(t, err, e.Name())
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	return dir
}

// unittestResult is what a verbose unittest run reported, by test file.
type unittestResult struct {
	files   map[string]*fileResult
	failed  []string       // test ids that failed or errored
	skipped map[string]int // skip reason: how many tests gave it
	total   int            // tests run
}

type fileResult struct{ pass, skip, fail int }

func (r *unittestResult) passed() int {
	n := 0
	for _, f := range r.files {
		n += f.pass
	}
	return n
}

// A test's line in unittest's verbose output: its method and, in parentheses, its module and
// class (Python 3.11 adds the method again); its docstring's first line may follow on the
// next line. The status follows " ... ", on the same line unless the test printed something.
var (
	unittestTest    = regexp.MustCompile(`^\w+ \((?:tests\.)?(\w+)\.\w+(?:\.\w+)?\)`)
	unittestStatus  = regexp.MustCompile(`(?:^|\.\.\. )(ok|ERROR|FAIL|expected failure|unexpected success|skipped ['"](.*)['"])$`)
	unittestRan     = regexp.MustCompile(`(?m)^Ran (\d+) tests? in `)
	unittestSkipped = regexp.MustCompile(`(?m)^(?:OK|FAILED) \(.*skipped=(\d+)`)
)

// parseUnittest reads the results of `run_tests.py -v`, and checks them against unittest's
// summary lines, so that a test whose line it misread does not go unnoticed.
func parseUnittest(out string) (*unittestResult, error) {
	r := &unittestResult{files: map[string]*fileResult{}, skipped: map[string]int{}}
	var id, file string // the test whose status is awaited
	for _, line := range strings.Split(out, "\n") {
		if line == strings.Repeat("=", 70) {
			break // the failures' tracebacks
		}
		if m := unittestTest.FindStringSubmatch(line); m != nil {
			id, file = line[:strings.Index(line, " (")], m[1]
			if r.files[file] == nil {
				r.files[file] = &fileResult{}
			}
		}
		m := unittestStatus.FindStringSubmatch(line)
		if m == nil || id == "" {
			continue
		}
		f := r.files[file]
		switch status := m[1]; {
		case status == "ok":
			f.pass++
		case status == "expected failure":
			f.skip++
			r.skipped["expected failure"]++
		case strings.HasPrefix(status, "skipped"):
			f.skip++
			r.skipped[m[2]]++
		default:
			f.fail++
			r.failed = append(r.failed, file+"."+id+": "+status)
		}
		r.total++
		id = ""
	}
	m := unittestRan.FindStringSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("no \"Ran N tests\" line")
	}
	if ran, _ := strconv.Atoi(m[1]); ran != r.total {
		return nil, fmt.Errorf("unittest ran %d tests, the output has the results of %d", ran, r.total)
	}
	skips := 0
	if m := unittestSkipped.FindStringSubmatch(out); m != nil {
		skips, _ = strconv.Atoi(m[1])
	}
	if n := r.skips(); n != skips {
		return nil, fmt.Errorf("unittest skipped %d tests, the output has %d skips", skips, n)
	}
	return r, nil
}

func (r *unittestResult) skips() int {
	n := 0
	for _, f := range r.files {
		n += f.skip
	}
	return n
}

// table lays out the results per file, then the skip reasons, most frequent first.
func (r *unittestResult) table() string {
	var b strings.Builder
	names := make([]string, 0, len(r.files))
	for n := range r.files {
		names = append(names, n)
	}
	sort.Strings(names)
	var sum fileResult
	fmt.Fprintf(&b, "%-28s %5s %5s %5s\n", "file", "pass", "skip", "fail")
	for _, n := range names {
		f := r.files[n]
		fmt.Fprintf(&b, "%-28s %5d %5d %5d\n", n, f.pass, f.skip, f.fail)
		sum.pass, sum.skip, sum.fail = sum.pass+f.pass, sum.skip+f.skip, sum.fail+f.fail
	}
	fmt.Fprintf(&b, "%-28s %5d %5d %5d\n\nskipped because:\n", "total", sum.pass, sum.skip, sum.fail)
	reasons := make([]string, 0, len(r.skipped))
	for why := range r.skipped {
		reasons = append(reasons, why)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if r.skipped[reasons[i]] != r.skipped[reasons[j]] {
			return r.skipped[reasons[i]] > r.skipped[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	for _, why := range reasons {
		fmt.Fprintf(&b, "%5d  %s\n", r.skipped[why], why)
	}
	return b.String()
}

// TestParseUnittest reads a verbose unittest run with each kind of result line: a docstring's
// line before the status, a status on its own line after the test's output, a skip reason in
// double quotes, a failure and an error; and refuses output whose results disagree with
// unittest's summary.
func TestParseUnittest(t *testing.T) {
	out := `test_create_ah (tests.test_addr.AHTest.test_create_ah)
Test ibv_create_ah. ... ok
test_xrc (tests.test_atomic.AtomicTest.test_xrc) ... skipped 'Create XRCD is not supported'
test_is_fork_initialized (tests.test_fork.ForkAPITest.test_is_fork_initialized) ... is_fork_initialized() = 2
ok
test_sysfs (tests.test_rdmacm.CMTestCase.test_sysfs) ... skipped "Device d doesn't have net interface"
test_query (tests.test_device.DeviceTest) ... gorxe: query: invalid argument
ERROR
test_traffic (tests.test_addr.AHTest.test_traffic) ... FAIL
======================================================================
ERROR: test_query (tests.test_device.DeviceTest)
... ok
----------------------------------------------------------------------
Ran 6 tests in 0.010s

FAILED (failures=1, errors=1, skipped=2)
`
	r, err := parseUnittest(out)
	require.NoError(t, err)
	assert.Equal(t, map[string]*fileResult{
		"test_addr":   {pass: 1, fail: 1},
		"test_atomic": {skip: 1},
		"test_fork":   {pass: 1},
		"test_rdmacm": {skip: 1},
		"test_device": {fail: 1},
	}, r.files)
	assert.Equal(t, []string{"test_device.test_query: ERROR", "test_addr.test_traffic: FAIL"}, r.failed)
	assert.Equal(t, map[string]int{"Create XRCD is not supported": 1, "Device d doesn't have net interface": 1}, r.skipped)
	assert.Equal(t, 2, r.passed())

	_, err = parseUnittest(strings.Replace(out, "Ran 6 tests", "Ran 7 tests", 1))
	assert.EqualError(t, err, "unittest ran 7 tests, the output has the results of 6")
	_, err = parseUnittest(strings.Replace(out, "skipped=2", "skipped=3", 1))
	assert.EqualError(t, err, "unittest skipped 3 tests, the output has 2 skips")
}
