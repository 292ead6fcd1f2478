package demo

import (
	"bytes"
	"io"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/trace"
)

// drawLadder draws a capture into out as gorxe trace does with its default gap and collapsing.
func drawLadder(pcap []byte, f trace.Format, title string, out io.Writer) error {
	d, err := trace.Build(bytes.NewReader(pcap), trace.Options{Gap: trace.DefaultGap, Collapse: trace.DefaultCollapse}, f == trace.FormatHTML)
	if err != nil {
		return err
	}
	d.Title = title
	return trace.Write(out, d, f)
}
