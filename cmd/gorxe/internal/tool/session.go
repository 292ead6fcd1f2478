package tool

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/faultnote"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/loglevel"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/observe"
	"github.com/gorxe/gorxe/internal/devselect"
)

// Session is a tool's device with what the common options hang on it: the capture, the logger,
// the fault note and the observation. Close ends them in order.
type Session struct {
	Dev            *gorxe.Device
	pcap           *pcapFile // --pcap; nil without
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
	sel.Logger = loglevel.Logger(stderr, c.LogLevel)
	cfg, err := sel.Config(os.Getenv)
	if err != nil {
		return nil, err
	}
	if path := cmp.Or(c.Pcap, os.Getenv(devselect.EnvPcap)); path != "" {
		if s.pcap, err = createPcap(path, cfg); err != nil {
			return nil, err
		}
		cfg.Tap = s.pcap.tap(cfg.Tap)
	}
	if s.Dev, err = devselect.Open(cfg); err != nil {
		return nil, joinClose(err, s.pcap.close())
	}
	if cm {
		s.obs, err = c.Observe.StartCM(stderr, s.Dev)
	} else {
		s.obs, err = c.Observe.Start(stderr, s.Dev)
	}
	if err != nil {
		return nil, joinClose(err, s.Dev.Close(), s.pcap.close())
	}
	return s, nil
}

// joinClose adds the errors of closing what was opened to err, which stays as it is when they
// succeeded.
func joinClose(err error, closeErrs ...error) error {
	if errors.Join(closeErrs...) == nil {
		return err
	}
	return errors.Join(append([]error{err}, closeErrs...)...)
}

// Close ends the session once the tool has released its own objects: it stops serving metrics
// and prints the counters (--counters, on stdout), closes the device, then the capture file (the
// device taps no more datagrams once closed, so the file holds every one), and under GORXE_FAULTS
// says what the faults did (on stderr). A tool calls it on every path, failures and Ctrl-C
// included.
func (s *Session) Close() error {
	s.obs.End(s.stdout)
	err := errors.Join(s.Dev.Close(), s.pcap.close())
	if s.note != nil {
		fmt.Fprintln(s.stderr, s.note.Summary(s.Dev.Counters().Snapshot()))
	}
	return err
}
