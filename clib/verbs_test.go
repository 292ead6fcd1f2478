package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVerbsProgram compiles testdata/verbs.c against the distribution's headers, links it with
// the library and runs it: libibverbs' errno conventions (EINVAL, EBUSY, EOPNOTSUPP, bad_wr),
// RC traffic between two QPs of one device (SEND with immediate, RDMA WRITE and READ, inline
// data), a completion channel whose fd is non-blocking and polled with poll(2), UD traffic
// answered through ibv_create_ah_from_wc, ibv_resize_cq, the port event on async_fd, and a child
// of fork() refused at once.
func TestVerbsProgram(t *testing.T) {
	needLibrary(t)
	bin := filepath.Join(t.TempDir(), "verbs")
	out, err := exec.Command("cc", "-Wall", "-Werror", "-o", bin, "testdata/verbs.c",
		filepath.Join(libDir, "libibverbs.so.1")).CombinedOutput()
	require.NoError(t, err, "cc: %s", out)
	addr, _ := addressPair()
	require.Equal(t, "ok\n", start(t, addr, bin).wait(t))
}
