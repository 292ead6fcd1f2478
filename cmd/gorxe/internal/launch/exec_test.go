package launch

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/internal/clibtest"
)

// asGorxeExec, set in its environment, makes the test binary gorxe exec with its arguments, so
// the tests run the real execve without building gorxe.
const asGorxeExec = "GORXE_LAUNCH_TEST_AS_EXEC"

func TestMain(m *testing.M) {
	RunStage()
	if os.Getenv(asSignalWaiter) != "" {
		signalWaiter()
	}
	if os.Getenv(asGorxeExec) != "" {
		os.Unsetenv(asGorxeExec)
		os.Exit(tool.Exec(Command, os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// gorxeExec returns the command gorxe exec args, with env added to the test's environment.
func gorxeExec(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), self, args...)
	cmd.Env = append(append(os.Environ(), asGorxeExec+"=1"), env...)
	return cmd
}

// TestExecReplacesItself: the program runs in gorxe exec's process (the same pid), with the
// environment gorxe exec built, and its exit status and the signal that ends it are its own.
func TestExecReplacesItself(t *testing.T) {
	lib := t.TempDir()
	writeFile(t, filepath.Join(lib, libFile), "") // sh loads no libibverbs

	var out bytes.Buffer
	cmd := gorxeExec(t, []string{"LD_LIBRARY_PATH=/opt/a", "GORXE_ADDR=eth-ignored"},
		"--lib", lib, "--addr", "127.21.0.1", "--sysfs=off", "--", "sh", "-c", `echo "$$ $LD_LIBRARY_PATH $GORXE_ADDR"; exit 7`)
	cmd.Stdout = &out
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 7, ee.ExitCode())
	assert.Equal(t, strconv.Itoa(cmd.Process.Pid)+" "+lib+":/opt/a 127.21.0.1\n", out.String())

	err = gorxeExec(t, nil, "--lib", lib, "sh", "-c", "kill -TERM $$").Run()
	require.ErrorAs(t, err, &ee)
	ws := ee.Sys().(syscall.WaitStatus)
	assert.True(t, ws.Signaled(), "ended by a signal, not an exit status: %v", ws)
	assert.Equal(t, syscall.SIGTERM, ws.Signal())

	var stderr bytes.Buffer
	cmd = gorxeExec(t, nil, "--lib", lib, "nosuch-gorxe-program", "-x")
	cmd.Stderr = &stderr
	err = cmd.Run()
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 127, ee.ExitCode())
	assert.Equal(t, "gorxe exec: nosuch-gorxe-program: command not found\n", stderr.String())
}

// TestExecKeepsIgnoredInterrupt: a program started from a shell that ignores SIGINT (as a
// script's background job does) still ignores it through gorxe exec, with the device view or
// without, which would not be so had gorxe exec caught Ctrl-C itself.
func TestExecKeepsIgnoredInterrupt(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc/self/status to read the ignored signals from")
	}
	lib := t.TempDir()
	writeFile(t, filepath.Join(lib, libFile), "")
	self, err := os.Executable()
	require.NoError(t, err)
	for _, mode := range []string{sysfsOff, sysfsAuto} { // becoming the program, and under the view where the machine allows it
		cmd := exec.CommandContext(t.Context(), "sh", "-c", `trap "" INT; exec "$0" --lib "$1" --sysfs "$2" -- grep SigIgn /proc/self/status`, self, lib, mode)
		cmd.Env = append(os.Environ(), asGorxeExec+"=1")
		out, err := cmd.Output()
		require.NoError(t, err, mode)
		hex, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "SigIgn:")
		require.True(t, ok, "%s: %q", mode, out)
		mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		require.NoError(t, err, mode)
		assert.NotZero(t, mask&(1<<(syscall.SIGINT-1)), "--sysfs=%s: SIGINT is not ignored in the program: SigIgn %#x", mode, mask)
	}
}

// TestExecDevinfo runs the distribution's ibv_devinfo through gorxe exec on the library make clib
// builds: it lists the one device --addr names, with that address's GID at index 1.
func TestExecDevinfo(t *testing.T) {
	if why := clibtest.Missing(); why != "" {
		t.Skip("the C library cannot be built here: " + why)
	}
	if _, err := exec.LookPath("ibv_devinfo"); err != nil {
		t.Skip("ibv_devinfo is not installed (ibverbs-utils)")
	}
	lib := filepath.Join(t.TempDir(), "lib")
	require.NoError(t, clibtest.Build("../../../..", lib))

	const addr = "127.21.0.1"
	var stdout, stderr bytes.Buffer
	cmd := gorxeExec(t, []string{"GORXE_ADDR="}, "--lib", lib, "--addr", addr, "--", "ibv_devinfo", "-v")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, err, "stderr:\n%s", stderr.String())
	out := stdout.String()
	assert.Equal(t, 1, strings.Count(out, "hca_id:"), out)
	assert.Contains(t, out, "hca_id:\tgorxe_"+addr+"\n")
	assert.Contains(t, out, "\t\t\tGID[  1]:\t\t::ffff:"+addr+", RoCE v2\n")
	assert.Empty(t, stderr.String())
}
