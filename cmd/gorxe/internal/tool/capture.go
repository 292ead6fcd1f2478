package tool

import (
	"errors"
	"fmt"
	"os"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/capture"
	"github.com/gorxe/gorxe/internal/devselect"
	"github.com/gorxe/gorxe/netio"
)

// pcapFile is a session's --pcap capture: a pcapng file and the writer that the device's tap
// feeds. It buffers, so the file is complete once close has run, which the session does after
// closing the device on every path.
type pcapFile struct {
	f *os.File
	w *capture.Writer
}

// createPcap creates the capture file at path for a device opened with cfg: its port and name go
// in the file's interface description.
func createPcap(path string, cfg gorxe.Config) (*pcapFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	w, err := capture.NewWriter(f, capture.Options{Port: cfg.Port, Interface: devselect.DeviceName(cfg)})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("capture: %w", err), f.Close())
	}
	return &pcapFile{f: f, w: w}, nil
}

// tap returns next extended to write every datagram to the file.
func (p *pcapFile) tap(next netio.TapFunc) netio.TapFunc {
	if next == nil {
		return p.w.Tap
	}
	return func(dir netio.Direction, m *netio.Message) {
		next(dir, m)
		p.w.Tap(dir, m)
	}
}

// close writes what the writer holds and closes the file; a write error that stopped the capture
// earlier is reported here. Nil (no --pcap) closes nothing.
func (p *pcapFile) close() error {
	if p == nil {
		return nil
	}
	err := errors.Join(p.w.Close(), p.f.Close())
	if err != nil {
		return fmt.Errorf("capture %s: %w", p.f.Name(), err)
	}
	return nil
}
