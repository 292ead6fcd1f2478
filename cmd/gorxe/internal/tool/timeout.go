package tool

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrTimedOut matches every TimeoutError.
var ErrTimedOut = errors.New("timed out")

// TimeoutError is a step that did not finish within the time a tool gives it.
type TimeoutError struct{ After time.Duration }

func (e *TimeoutError) Error() string { return fmt.Sprintf("%v after %v", ErrTimedOut, e.After) }

// Unwrap lets TimeoutError match ErrTimedOut and context.DeadlineExceeded.
func (e *TimeoutError) Unwrap() []error { return []error{ErrTimedOut, context.DeadlineExceeded} }

// Within runs step with ctx bounded by d (0: unbounded). When the bound, not ctx, ends it, the
// error is a TimeoutError that says after how long, in place of the context's bare "context
// deadline exceeded"; step's error otherwise.
func Within[T any](ctx context.Context, d time.Duration, step func(context.Context) (T, error)) (T, error) {
	if d <= 0 {
		return step(ctx)
	}
	sctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	v, err := step(sctx)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		err = &TimeoutError{After: d}
	}
	return v, err
}
