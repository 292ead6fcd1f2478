package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mpiRun is the UCX address pair (ucxAddressPair) of TestMPI's two ranks.
const mpiRun = 19

// TestMPI builds testdata/mpi.c with the distribution's Open MPI (openmpi-bin, libopenmpi-dev)
// and runs it as two ranks over UCX (pml ucx, osc ucx) on the library, each rank on its own
// address under gorxe exec's device view, with UCX limited to its verbs transports so that every
// message crosses gorxe: eager and rendezvous sends, a reduction, and one-sided puts and gets.
func TestMPI(t *testing.T) {
	needLibrary(t, "mpicc", "mpirun", "ucx_perftest")
	underView(t, "127.0.0.1") // UCX needs the view: skip here where the machine refuses it
	prog := filepath.Join(t.TempDir(), "mpi")
	out, err := exec.Command("mpicc", "-O2", "-Wall", "-Werror", "-o", prog, filepath.Join("testdata", "mpi.c")).CombinedOutput()
	require.NoError(t, err, "mpicc: %s", out)

	args := []string{"--mca", "pml", "ucx", "--mca", "osc", "ucx", "--mca", "btl", "self"}
	a, b := ucxAddressPair(mpiRun)
	for i, addr := range []string{a, b} {
		if i > 0 {
			args = append(args, ":")
		}
		// Open MPI starts each rank of its own context: gorxe exec on the rank's address, and
		// UCX on the device there.
		args = append(append(append(args, "-np", "1"), underView(t, addr)...),
			"env", "UCX_NET_DEVICES=gorxe_"+addr+":1", "UCX_TLS=rc_verbs,ud_verbs,self", prog)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mpirun", args...)
	// Open MPI refuses to run as root unless told twice; the test machine may be a container's root.
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "mpirun: %s", out)
	require.Contains(t, string(out), "ok\n")
}
