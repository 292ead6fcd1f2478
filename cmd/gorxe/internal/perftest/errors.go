package perftest

import (
	"errors"
	"fmt"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// ErrCompletion matches every CompletionError.
var ErrCompletion = errors.New("completion with error")

// StepError is a failed step of a run, named the way perftest reports it ("Couldn't post send",
// "Failed to modify QP to RTR"), so that both tools fail with recognisable messages.
type StepError struct {
	Step string
	Err  error
}

func (e *StepError) Error() string { return e.Step + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *StepError) Unwrap() error { return e.Err }

func stepErr(err error, format string, args ...any) error {
	return &StepError{Step: fmt.Sprintf(format, args...), Err: err}
}

// CompletionError is a work completion with an error status: the peer refused an access, stopped
// answering, or went away.
type CompletionError struct {
	Side       string // "client" or "server"
	WC         gorxe.WC
	Scnt, Ccnt int // messages posted and completed so far
}

// Error describes the completion as perftest does.
func (e *CompletionError) Error() string {
	return fmt.Sprintf("Completion with error at %s: Failed status %d (%s): wr_id %d syndrom 0x%x, scnt=%d, ccnt=%d",
		e.Side, int(e.WC.Status), e.WC.Status, e.WC.WRID, e.WC.VendorErr, e.Scnt, e.Ccnt)
}

// Is makes every CompletionError match ErrCompletion.
func (e *CompletionError) Is(target error) bool { return target == ErrCompletion }

// InterruptedError is a measurement ended by its context (Ctrl-C) after Done of Total messages
// or iterations; Total is 0 in a timed run. The result of the part that ran is still printed.
type InterruptedError struct {
	Done, Total int
	Unit        string // "messages", "iterations"
	Cause       error
}

func (e *InterruptedError) Error() string {
	if e.Total == 0 {
		return fmt.Sprintf("%v after %d %s", tool.ErrInterrupted, e.Done, e.Unit)
	}
	return fmt.Sprintf("%v after %d of %d %s", tool.ErrInterrupted, e.Done, e.Total, e.Unit)
}

// Is makes every InterruptedError match tool.ErrInterrupted, the runner's one wording of Ctrl-C.
func (e *InterruptedError) Is(target error) bool { return target == tool.ErrInterrupted }

// Unwrap returns why the context ended.
func (e *InterruptedError) Unwrap() error { return e.Cause }
