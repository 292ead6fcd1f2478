package perftest

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// summaries are the one-line descriptions of the tests, for gorxe help.
var summaries = map[Test]string{
	{VerbWrite, BW}:   "ib_write_bw peer: RDMA WRITE bandwidth",
	{VerbRead, BW}:    "ib_read_bw peer: RDMA READ bandwidth",
	{VerbSend, BW}:    "ib_send_bw peer: SEND bandwidth",
	{VerbAtomic, BW}:  "ib_atomic_bw peer: atomic operation rate",
	{VerbWrite, Lat}:  "ib_write_lat peer: RDMA WRITE latency",
	{VerbRead, Lat}:   "ib_read_lat peer: RDMA READ latency",
	{VerbSend, Lat}:   "ib_send_lat peer: SEND latency",
	{VerbAtomic, Lat}: "ib_atomic_lat peer: atomic operation latency",
}

// Command returns the gorxe command of test t.
func Command(t Test) tool.Command {
	return tool.Command{
		Name:     t.Name(),
		Synopsis: "gorxe " + t.Name() + " [OPTIONS] [HOST]",
		Summary:  summaries[t],
		Usage:    func(w io.Writer) { Usage(w, t) },
		Parse: func(args []string) (tool.Run, error) {
			p, err := ParseArgs(t, args)
			if errors.Is(err, ErrVersion) {
				return func(_ context.Context, stdout, _ io.Writer) error {
					_, err := fmt.Fprintf(stdout, "Version: %s\n", Version)
					return err
				}, nil
			}
			return func(ctx context.Context, stdout, stderr io.Writer) error { return Run(ctx, p, stdout, stderr) }, err
		},
	}
}
