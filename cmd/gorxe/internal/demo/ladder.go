package demo

import (
	"bytes"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/trace"
)

// drawLadder draws wire, a capture of what reached the network, into out as gorxe trace does
// with its default gap and collapsing.
func drawLadder(wire []byte, f trace.Format, title string, out io.Writer) error {
	d, err := trace.Build(bytes.NewReader(wire), trace.Options{Gap: trace.DefaultGap, Collapse: trace.DefaultCollapse}, f == trace.FormatHTML)
	if err != nil {
		return err
	}
	d.Title = title
	return trace.Write(out, d, f)
}
