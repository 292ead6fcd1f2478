package stats

import (
	"context"
	"io"
	"os"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// Command is gorxe stats.
var Command = tool.Command{
	Name:     "stats",
	Synopsis: "gorxe stats [-once] ADDR",
	Summary:  "live counters of a gorxe tool running with --metrics ADDR",
	Usage:    Usage,
	Parse: func(args []string) (tool.Run, error) {
		o, err := ParseArgs(args)
		return func(ctx context.Context, stdout, _ io.Writer) error {
			o.Clear = !o.Once && isTerminal(stdout)
			return Run(ctx, o, stdout)
		}, err
	},
}

// isTerminal reports whether w is a terminal, where a refresh redraws the screen instead of
// following the previous one.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
