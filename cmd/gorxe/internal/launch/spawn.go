package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// errNoView: the device view cannot be made (the machine refuses its namespaces or mounts, or
// the devices cannot be queried); the program has not run.
var errNoView = errors.New("no device view")

// selfExe is the gorxe executable the stage runs as, whatever its path was.
const selfExe = "/proc/self/exe"

// forwarded are the signals gorxe exec passes on to the program while it waits for it: those
// that are sent to a process. The terminal's (SIGINT, SIGQUIT) reach the program without
// help, as it is in gorxe exec's process group, so gorxe exec only keeps them from ending itself.
var (
	forwarded = []os.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}
	fromTTY   = []os.Signal{syscall.SIGINT, syscall.SIGQUIT}
)

// execInView runs the program in new namespaces (see namespaces) where the device view is
// mounted, and ends gorxe exec with the program's exit status. It returns an error matching
// errNoView when the view cannot be made (the program has not run), and the error l.exec would
// give when the program cannot be run.
func (l launch) execInView() error {
	attr, err := namespaces()
	if err != nil {
		return fmt.Errorf("%w: %w", errNoView, err)
	}
	files, err := viewFiles(envLookup(l.env))
	if err != nil {
		return fmt.Errorf("%w: %w", errNoView, err)
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer specW.Close()
	reportR, reportW, err := os.Pipe()
	if err != nil {
		specR.Close()
		return err
	}
	defer reportR.Close()

	cmd := &exec.Cmd{
		Path:        selfExe,
		Args:        []string{os.Args[0]},
		Env:         append(os.Environ(), stageEnv+"=1"),
		Stdin:       os.Stdin,
		Stdout:      os.Stdout,
		Stderr:      os.Stderr,
		ExtraFiles:  []*os.File{specR, reportW}, // stageSpecFD, stageReportFD
		SysProcAttr: attr,
	}
	// The signals are caught before the program starts, so none is lost in between; a signal
	// gorxe's caller ignored stays ignored, and the program inherits that.
	sigs := make(chan os.Signal, 8)
	for _, s := range append(append([]os.Signal(nil), forwarded...), fromTTY...) {
		if !signal.Ignored(s) {
			signal.Notify(sigs, s)
		}
	}
	defer signal.Stop(sigs)

	err = cmd.Start()
	specR.Close()
	reportW.Close()
	if err != nil {
		return fmt.Errorf("%w: new namespaces: %w", errNoView, err)
	}
	// The spec fits in the pipe's buffer only for a few devices, so it is written while the
	// stage reads.
	wrote := make(chan error, 1)
	go func() {
		err := json.NewEncoder(specW).Encode(stageSpec{Path: l.path, Argv: l.argv, Env: l.env, Files: files})
		specW.Close()
		wrote <- err
	}()
	report, readErr := io.ReadAll(reportR) // EOF: the stage failed, or the program runs
	if readErr == nil && len(report) > 0 {
		_ = cmd.Wait()
		<-wrote
		return stageFailure(l.argv[0], report)
	}
	if err := <-wrote; err != nil {
		_ = cmd.Wait()
		return fmt.Errorf("%w: handing the stage its view: %w", errNoView, err)
	}

	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if !slices.Contains(fromTTY, s) {
					_ = cmd.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	_ = cmd.Wait()
	close(done)
	exitAs(cmd.ProcessState.Sys().(syscall.WaitStatus))
	return nil // not reached
}

// stageFailure turns the stage's report into the error gorxe exec gives.
func stageFailure(name string, report []byte) error {
	var r stageReport
	if err := json.Unmarshal(report, &r); err != nil {
		return fmt.Errorf("%w: the stage's report %q: %w", errNoView, report, err)
	}
	if r.Step != stepExec {
		return fmt.Errorf("%w: %s", errNoView, r.Err)
	}
	status := exitCannot
	if errors.Is(r.Errno, fs.ErrNotExist) {
		status = exitNotFound
	}
	return &tool.StatusError{Status: status, Err: fmt.Errorf("%s: %w", name, r.Errno)}
}

// exitAs ends gorxe exec as the program ended: with its exit status, or killed by the same
// signal when that is one the Go runtime dies of (SIGHUP, SIGINT, SIGTERM, SIGKILL); a program
// killed by another signal N gives 128+N, as a shell reports it.
func exitAs(ws syscall.WaitStatus) {
	if !ws.Signaled() {
		os.Exit(ws.ExitStatus())
	}
	switch s := ws.Signal(); s {
	case syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL:
		// Sent to this thread, the signal is handled as the call returns, before the exit below,
		// unless gorxe's caller had it ignored.
		signal.Reset(s)
		raiseOnThread(s)
	}
	os.Exit(128 + int(ws.Signal()))
}
