package tool

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/internal/devselect"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/faultnote"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/loglevel"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/observe"
)

// Session is a tool's device with what the common options hang on it: the capture, the logger,
// the fault note and the observation. Close ends them in order.
type Session struct {
	Dev            *gorxe.Device
	note           *faultnote.Note
	obs            *observe.Session
	stdout, stderr io.Writer
}

// Open opens the device sel selects, with the common options on top: --bind replaces sel.Bind,
// --pcap, --log-level and GORXE_FAULTS configure the device (the faults' banner goes to stderr
// first), and --metrics starts serving its counters (saying where on stderr).
func (c Common) Open(sel devselect.Selection, stdout, stderr io.Writer) (*Session, error) {
	return c.open(sel, false, stdout, stderr)
}

// OpenCM is Open for a tool that connects through RDMA-CM: --metrics and --counters show the
// device's connection manager agent too.
func (c Common) OpenCM(sel devselect.Selection, stdout, stderr io.Writer) (*Session, error) {
	return c.open(sel, true, stdout, stderr)
}

func (c Common) open(sel devselect.Selection, cm bool, stdout, stderr io.Writer) (*Session, error) {
	s := &Session{stdout: stdout, stderr: stderr}
	note, err := faultnote.FromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	if note != nil {
		s.note = note
		sel.Tap = note.Tap
		fmt.Fprintln(stderr, note.Banner())
	}
	if c.Bind != "" {
		sel.Bind = c.Bind
	}
	sel.Pcap = c.Pcap
	sel.Logger = loglevel.Logger(stderr, c.LogLevel)
	if s.Dev, err = sel.Open(); err != nil {
		return nil, err
	}
	if cm {
		s.obs, err = c.Observe.StartCM(stderr, s.Dev)
	} else {
		s.obs, err = c.Observe.Start(stderr, s.Dev)
	}
	if err != nil {
		return nil, errors.Join(err, s.Dev.Close())
	}
	return s, nil
}

// Close ends the session once the tool has released its own objects: it stops serving metrics
// and prints the counters (--counters, on stdout), closes the device, and under GORXE_FAULTS says
// what the faults did (on stderr).
func (s *Session) Close() error {
	s.obs.End(s.stdout)
	err := s.Dev.Close()
	if s.note != nil {
		fmt.Fprintln(s.stderr, s.note.Summary(s.Dev.Counters().Snapshot()))
	}
	return err
}
