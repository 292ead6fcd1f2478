package demo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe"
)

// The devices' addresses and the per-step timeout when Options leaves them out.
var (
	defaultA       = netip.MustParseAddr("127.0.0.1")
	defaultB       = netip.MustParseAddr("127.0.0.2")
	defaultTimeout = 10 * time.Second
)

// port returns the UDP port both devices use.
func (o *Options) port() uint16 {
	if o.Port == 0 {
		return gorxe.DefaultPort
	}
	return o.Port
}

// runOutput is what a run writes besides its narration: the captures and the ladder diagram.
type runOutput struct {
	*recording
	o      *Options
	ladder *bytes.Buffer // the capture the ladder is drawn from, the -pcap file's frames; nil without -trace
}

// recorder checks the output options and opens the run's captures.
func (o *Options) recorder() (*runOutput, error) {
	r := &runOutput{o: o}
	var ladder io.Writer // a nil *bytes.Buffer would be a non-nil io.Writer
	if o.Trace != nil {
		r.ladder = &bytes.Buffer{}
		ladder = r.ladder
	}
	var err error
	r.recording, err = newRecording(o.port(), true, o.Pcap, ladder)
	return r, err
}

// finish closes the devices, so no tap runs any more, then completes the captures and draws the
// ladder (of as much as ran, when the run failed). It returns runErr joined with its own errors.
func (r *runOutput) finish(runErr error, open []*side) error {
	for i := len(open) - 1; i >= 0; i-- {
		open[i].close()
	}
	errs := []error{runErr, r.close()}
	if r.ladder != nil && r.packets() > 0 { // a run that failed to start has nothing to draw
		if err := drawLadder(r.ladder.Bytes(), r.o.TraceFormat, "gorxe demo", r.o.Trace); err != nil {
			errs = append(errs, fmt.Errorf("ladder diagram: %w", err))
		}
	}
	return errors.Join(errs...)
}
