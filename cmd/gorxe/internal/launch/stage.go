package launch

import (
	"encoding/json"
	"errors"
	"os"
	"syscall"
)

// stageEnv, set in its environment, makes a gorxe process the stage of gorxe exec's device view:
// the process gorxe exec starts in a new user and mount namespace, which mounts the view and
// then replaces itself with the program.
const stageEnv = "GORXE_EXEC_STAGE"

// The stage's descriptors: it reads its stageSpec from the first and writes a stageReport to the
// second when it fails; the second closes on exec, so gorxe exec reads nothing there once the
// program runs.
const (
	stageSpecFD   = 3
	stageReportFD = 4
)

// stageSpec is what gorxe exec tells the stage: the program's execve and the view's files.
type stageSpec struct {
	Path  string     `json:"path"`
	Argv  []string   `json:"argv"`
	Env   []string   `json:"env"`
	Files []viewFile `json:"files"`
}

// The steps of the stage that can fail, as a stageReport names them.
const (
	stepView = "view" // mounting the view: the machine refuses it
	stepExec = "exec" // the execve of the program
)

// stageReport says why the stage failed.
type stageReport struct {
	Step  string        `json:"step"`
	Err   string        `json:"err"`
	Errno syscall.Errno `json:"errno,omitempty"`
}

// RunStage does the stage's work and never returns when this process is gorxe exec's stage;
// in any other process it returns at once. Programs that run gorxe exec (gorxe, and the tests
// that stand in for it) call it first thing.
func RunStage() {
	if os.Getenv(stageEnv) == "" {
		return
	}
	os.Exit(runStage())
}

// runStage mounts the view the spec describes and execs the program, returning the exit status
// of a stage that failed (after reporting why).
func runStage() int {
	report := os.NewFile(stageReportFD, "report")
	syscall.CloseOnExec(stageReportFD)
	fail := func(r stageReport) int {
		_ = json.NewEncoder(report).Encode(r)
		return 1
	}
	spec := os.NewFile(stageSpecFD, "spec")
	var s stageSpec
	err := json.NewDecoder(spec).Decode(&s)
	spec.Close()
	if err != nil {
		return fail(stageReport{Step: stepView, Err: "reading the view: " + err.Error()})
	}
	if err := mountView(s.Files); err != nil {
		return fail(stageReport{Step: stepView, Err: err.Error()})
	}
	if err := dropCaps(); err != nil {
		return fail(stageReport{Step: stepView, Err: "dropping the capability to mount: " + err.Error()})
	}
	err = syscall.Exec(s.Path, s.Argv, s.Env)
	r := stageReport{Step: stepExec, Err: err.Error()}
	if errno, ok := errors.AsType[syscall.Errno](err); ok {
		r.Errno = errno
	}
	return fail(r)
}
