package tool

import (
	"context"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// asMainCommand makes the test binary run a Main command that waits on stdin, as gorxe dump does
// on a pipe.
const asMainCommand = "GORXE_TOOL_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainCommand) != "" {
		os.Exit(Exec(Command{Name: "wait", Main: func(_ []string, stdout, _ io.Writer) int {
			stdout.Write([]byte("ready\n"))
			io.Copy(io.Discard, os.Stdin)
			return ExitOK
		}}, nil, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// A Main command gets no context, so Ctrl-C must keep its default effect and end the process
// instead of being caught for a context nobody reads.
func TestInterruptEndsMainCommand(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	// Killed after 20 s if the interrupt was caught and ignored: the check below then fails.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), asMainCommand+"=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line := make([]byte, 6)
	_, err = io.ReadFull(stdout, line)
	require.NoError(t, err)
	require.Equal(t, "ready\n", string(line))
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	ws := ee.Sys().(syscall.WaitStatus)
	assert.True(t, ws.Signaled() && ws.Signal() == syscall.SIGINT, "ended by %v", ee)
}
