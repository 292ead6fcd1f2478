package launch

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// asSignalWaiter, set in its environment, makes the test binary a program that says "ready",
// waits for SIGTERM and then exits with status 3.
const asSignalWaiter = "GORXE_LAUNCH_TEST_AS_SIGNAL_WAITER"

// signalWaiter is the program asSignalWaiter makes of the test binary.
func signalWaiter() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	os.Stdout.WriteString("ready\n")
	<-sigs
	os.Stdout.WriteString("got SIGTERM\n")
	os.Exit(3)
}

// needView skips the test where the machine refuses the device view, saying why.
func needView(t *testing.T, lib string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := gorxeExec(t, []string{"GORXE_ADDR="}, "--lib", lib, "--addr", "127.0.0.1", "--sysfs=on", "--", "true")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Skipf("the machine refuses the device view (it needs root, or unprivileged user namespaces): %v: %s", err, stderr.String())
	}
}

// TestExecView: under --sysfs=on the program sees the device the library lists in
// /sys/class/infiniband and /sys/class/infiniband_verbs, with rxe's file contents, and the
// character devices' stand-ins in /dev/infiniband (character devices, as UCX requires); the rest of /sys/class and /dev is the host's
// (the interfaces in /sys/class/net, a /dev/null to write to).
func TestExecView(t *testing.T) {
	lib := t.TempDir()
	writeFile(t, filepath.Join(lib, libFile), "")
	needView(t, lib)

	const dev = "/sys/class/infiniband/gorxe_127.0.0.1"
	script := strings.Join([]string{
		"ls /sys/class/infiniband /sys/class/infiniband_verbs /dev/infiniband",
		"cat " + strings.Join([]string{
			dev + "/node_type", dev + "/node_guid", dev + "/parent",
			dev + "/ports/1/state", dev + "/ports/1/phys_state", dev + "/ports/1/link_layer",
			dev + "/ports/1/gids/1", dev + "/ports/1/gid_attrs/types/1", dev + "/ports/1/gid_attrs/ndevs/1",
			dev + "/ports/1/gids/1023", "/sys/class/infiniband_verbs/uverbs0/ibdev",
		}, " "),
		"ls " + dev + "/device/net",
		"readlink " + dev + "/device/net/lo",
		"ls " + dev + "/ports/1/gids | wc -l",
		"stat -c '%a %F' /dev/infiniband/uverbs0 /dev/infiniband/rdma_cm " + dev + "/node_guid",
		"echo x > /dev/null && echo /dev/null written",
		"{ echo x > " + dev + "/fw_ver; } 2>/dev/null || echo fw_ver read-only",
		"echo net: $(ls /sys/class/net)",
		"echo class: $(ls /sys/class)",
	}, "; ")
	var stdout, stderr bytes.Buffer
	cmd := gorxeExec(t, []string{"GORXE_ADDR=", "LC_ALL=C"}, "--lib", lib, "--addr", "127.0.0.1", "--sysfs=on", "--", "sh", "-c", script)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr:\n%s", stderr.String())
	assert.Empty(t, stderr.String())

	names := func(dir string, add ...string) string {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		for _, a := range add {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	want := `/dev/infiniband:
rdma_cm
uverbs0

/sys/class/infiniband:
gorxe_127.0.0.1

/sys/class/infiniband_verbs:
abi_version
uverbs0
1: CA
0000:7fff:fe00:0001
lo
4: ACTIVE
5: LinkUp
Ethernet
0000:0000:0000:0000:0000:ffff:7f00:0001
RoCE v2
lo
0000:0000:0000:0000:0000:0000:0000:0000
gorxe_127.0.0.1
lo
/sys/class/net/lo
1024
666 character special file
666 character special file
444 regular file
/dev/null written
fw_ver read-only
net: ` + names("/sys/class/net") + `
class: ` + names("/sys/class", "infiniband", "infiniband_verbs") + "\n"
	assert.Equal(t, want, stdout.String())

	_, err := os.Stat("/dev/infiniband/rdma_cm")
	assert.ErrorIs(t, err, os.ErrNotExist, "the view reached the host's /dev")
}

// TestExecViewStatus: under the view gorxe exec ends as the program ends (its exit status, the
// signal that killed it, 128+N for a signal the Go runtime does not die of) and passes SIGTERM on
// to the program.
func TestExecViewStatus(t *testing.T) {
	lib := t.TempDir()
	writeFile(t, filepath.Join(lib, libFile), "")
	needView(t, lib)
	run := func(args ...string) *exec.ExitError {
		err := gorxeExec(t, nil, append([]string{"--lib", lib, "--sysfs=on", "--"}, args...)...).Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%q", args)
		return ee
	}

	ee := run("sh", "-c", "exit 7")
	assert.Equal(t, 7, ee.ExitCode())
	ee = run("sh", "-c", "kill -TERM $$")
	ws := ee.Sys().(syscall.WaitStatus)
	assert.True(t, ws.Signaled() && ws.Signal() == syscall.SIGTERM, "%v", ws)
	ee = run("sh", "-c", "kill -SEGV $$")
	assert.Equal(t, 128+int(syscall.SIGSEGV), ee.ExitCode())

	// SIGTERM sent to gorxe exec reaches the program, which handles it.
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := gorxeExec(t, []string{asSignalWaiter + "=1"}, "--lib", lib, "--sysfs=on", "--", self)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(out)
	require.True(t, lines.Scan())
	require.Equal(t, "ready", lines.Text())
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.True(t, lines.Scan())
	assert.Equal(t, "got SIGTERM", lines.Text())
	var ee2 *exec.ExitError
	require.ErrorAs(t, cmd.Wait(), &ee2)
	assert.Equal(t, 3, ee2.ExitCode())
}

// TestExecViewOff: under --sysfs=off gorxe exec becomes the program, which sees the host's
// /sys/class as it is.
func TestExecViewOff(t *testing.T) {
	lib := t.TempDir()
	writeFile(t, filepath.Join(lib, libFile), "")
	var stdout bytes.Buffer
	cmd := gorxeExec(t, []string{"LC_ALL=C"}, "--lib", lib, "--sysfs=off", "--", "sh", "-c", "echo $$; ls /sys/class")
	cmd.Stdout = &stdout
	require.NoError(t, cmd.Run())
	entries, err := os.ReadDir("/sys/class")
	require.NoError(t, err)
	want := []string{}
	for _, e := range entries {
		want = append(want, e.Name())
	}
	pid, classes, _ := strings.Cut(stdout.String(), "\n")
	assert.Equal(t, strings.Join(want, "\n")+"\n", classes)
	assert.Equal(t, strconv.Itoa(cmd.Process.Pid), pid, "gorxe exec became the program")
}

// TestStageFailure: the stage's report of an execve that failed gives the status a shell gives
// (127 for a program that has gone, 126 for one that cannot run); one of the view's mounts is
// errNoView, which --sysfs=auto falls back from.
func TestStageFailure(t *testing.T) {
	err := stageFailure("prog", []byte(`{"step":"exec","err":"no such file or directory","errno":2}`))
	assert.EqualError(t, err, "prog: no such file or directory")
	assert.Equal(t, 127, statusOf(t, err))
	err = stageFailure("prog", []byte(`{"step":"exec","err":"permission denied","errno":13}`))
	assert.Equal(t, 126, statusOf(t, err))
	err = stageFailure("prog", []byte(`{"step":"view","err":"mount a tmpfs on /sys/class: operation not permitted"}`))
	assert.ErrorIs(t, err, errNoView)
	assert.EqualError(t, err, "no device view: mount a tmpfs on /sys/class: operation not permitted")
}

func statusOf(t *testing.T, err error) int {
	t.Helper()
	se, ok := errors.AsType[*tool.StatusError](err)
	require.True(t, ok, "%v", err)
	return se.Status
}
