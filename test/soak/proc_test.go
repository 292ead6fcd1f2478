package soak

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// envRole selects what a re-executed test binary does: the server side of the soak or a CPU hog.
const envRole = "GORXE_SOAK_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(envRole) {
	case "server":
		os.Exit(serverMain())
	case "hog":
		hogMain()
	}
	os.Exit(m.Run())
}

// child is a re-executed copy of the test binary.
type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startChild(t *testing.T, role string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envRole+"="+role)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		in.Close()
		if role == "hog" {
			cmd.Process.Kill()
		}
		cmd.Wait()
	})
	return &child{cmd: cmd, in: in, out: bufio.NewReader(out)}
}

// send writes v as one JSON line.
func send(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// recv reads one JSON line into v.
func recv(r *bufio.Reader, v any) error {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, v)
}

// hogMain spins on every CPU until killed: a process that competes for the CPUs, as the one
// that starved the soak run did.
func hogMain() {
	for range 2 * runtime.NumCPU() {
		go func() {
			x := uint64(1)
			for {
				x = x*6364136223846793005 + 1
			}
		}()
	}
	select {}
}

// liveHeap returns the heap the last garbage collection found live. The heap in use between
// collections (MemStats.HeapInuse) saws between about that and twice that as garbage accumulates,
// and a sample taken at a low point compared with one at a high point looked like growth (19
// against 37 MiB over eight minutes, with RSS flat at 55-56 MiB).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// rss returns the resident set size of this process in bytes, or 0.
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}
