package tool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
)

// fake is a command whose run returns err, after cancelling the runner's context when interrupt
// is set, as Ctrl-C would while the run waits.
func fake(parseErr, runErr error, interrupt bool, cancel context.CancelFunc) Command {
	return Command{
		Name:  "fake",
		Usage: func(w io.Writer) { fmt.Fprintln(w, "Usage: gorxe fake") },
		Parse: func([]string) (Run, error) {
			return func(ctx context.Context, stdout, _ io.Writer) error {
				fmt.Fprintln(stdout, "ran")
				if interrupt {
					cancel()
					<-ctx.Done()
				}
				return runErr
			}, parseErr
		},
	}
}

// TestExec pins the runner's exit statuses and its exact lines on stderr.
func TestExec(t *testing.T) {
	tests := []struct {
		name           string
		parseErr       error
		runErr         error
		interrupt      bool
		code           int
		stdout, stderr string
	}{
		{"success", nil, nil, false, ExitOK, "ran\n", ""},
		{"help", ErrHelp, nil, false, ExitOK, "Usage: gorxe fake\n", ""},
		{"usage", &getopt.UsageError{Msg: "invalid option -- 'z'"}, nil, false, ExitUsage, "",
			"gorxe fake: invalid option -- 'z'\n\nUsage: gorxe fake\n"},
		{"bad value", errors.New("-a x: invalid IP address"), nil, false, ExitFailure, "", "gorxe fake: -a x: invalid IP address\n"},
		{"failure", nil, errors.New("rdma_connect: peer rejected"), false, ExitFailure, "ran\n", "gorxe fake: rdma_connect: peer rejected\n"},
		{"timeout", nil, fmt.Errorf("connect to 10.0.0.1:7174: %w", &TimeoutError{After: 30 * time.Second}), false, ExitFailure, "ran\n",
			"gorxe fake: connect to 10.0.0.1:7174: timed out after 30s\n"},
		{"library error", nil, &gorxe.Error{Op: "open", Err: gorxe.ErrNoAddresses}, false, ExitFailure, "ran\n",
			"gorxe fake: open: " + gorxe.ErrNoAddresses.Error() + "\n"},
		{"own status", nil, &StatusError{Status: 127, Err: errors.New("nosuch: command not found")}, false, 127, "ran\n",
			"gorxe fake: nosuch: command not found\n"},
		{"interrupted waiting", nil, fmt.Errorf("accept: %w", context.Canceled), true, ExitInterrupted, "ran\n", "gorxe fake: interrupted\n"},
		{"interrupted, saying how far", nil, fmt.Errorf("%w after 3 of 10 steps", ErrInterrupted), true, ExitInterrupted, "ran\n",
			"gorxe fake: interrupted after 3 of 10 steps\n"},
		{"interrupted, finished anyway", nil, nil, true, ExitOK, "ran\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stdout, stderr bytes.Buffer
			code := ExecContext(ctx, fake(tt.parseErr, tt.runErr, tt.interrupt, cancel), nil, &stdout, &stderr)
			assert.Equal(t, tt.code, code)
			assert.Equal(t, tt.stdout, stdout.String())
			assert.Equal(t, tt.stderr, stderr.String())
		})
	}
}

func TestWithin(t *testing.T) {
	wait := func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, fmt.Errorf("dial: %w", ctx.Err())
	}
	_, err := Within(context.Background(), time.Millisecond, wait)
	assert.EqualError(t, err, "timed out after 1ms")
	assert.ErrorIs(t, err, ErrTimedOut)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	// The caller's own end is no timeout of the step.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Within(ctx, time.Hour, wait)
	assert.EqualError(t, err, "dial: context canceled")

	v, err := Within(context.Background(), 0, func(context.Context) (int, error) { return 7, nil })
	assert.Equal(t, 7, v)
	assert.NoError(t, err)
}
