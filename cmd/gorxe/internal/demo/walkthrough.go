package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/trace"
	"github.com/gorxe/gorxe/packet"
)

// Walkthrough runs the exchanges the wire walkthrough explains, each between a fresh pair of
// devices, narrating them to out. For each it writes into dir NAME.pcapng, a capture of what
// crossed the network (a lost packet is not in it, as no sniffer would have seen it), and
// NAME.svg, that capture's ladder diagram as gorxe trace draws it. o gives the addresses, the
// port and the per-step timeout.
func Walkthrough(ctx context.Context, o Options, dir string, out io.Writer) error {
	o.defaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, sc := range scenes {
		if err := runScene(ctx, &o, sc, dir, out); err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
	}
	return nil
}

// defaults fills in the addresses and timeout a zero Options leaves out.
func (o *Options) defaults() {
	if !o.A.IsValid() {
		o.A = defaultA
	}
	if !o.B.IsValid() {
		o.B = defaultB
	}
	if o.Timeout == 0 {
		o.Timeout = defaultTimeout
	}
}

func runScene(ctx context.Context, o *Options, sc scene, dir string, out io.Writer) (err error) {
	oA, oB := Options{Port: o.Port}, Options{Port: o.Port}
	if sc.faults != nil {
		if oA.Faults, err = sc.faults(); err != nil {
			return err
		}
	}
	var wire bytes.Buffer
	rec, err := newRecording(o.port(), false, &wire) // as a sniffer sees the scene
	if err != nil {
		return err
	}
	n := newNarrator(pathMTU.Bytes(), rec)
	n.names[o.A.Unmap()], n.names[o.B.Unmap()] = "A", "B"
	rnr := make(chan struct{})
	var once sync.Once
	n.watch = func(s *summary) {
		if s.hasAETH && s.syndrome.Type() == packet.SyndromeTypeRNRNAK {
			once.Do(func() { close(rnr) })
		}
	}

	fmt.Fprintf(out, "\n== %s: %s\n", sc.name, sc.title)
	if oA.Faults.Enabled() {
		fmt.Fprintf(out, "  A impairs what it sends: %s\n", oA.Faults)
	}
	var open []*side
	closeAll := func() {
		for i := len(open) - 1; i >= 0; i-- {
			open[i].close()
		}
		open = nil
	}
	defer closeAll()
	a, err := openSide("A", o.A, &oA, n.tap)
	if err != nil {
		return err
	}
	open = append(open, a)
	b, err := openSide("B", o.B, &oB, n.tap)
	if err != nil {
		return err
	}
	open = append(open, b)
	w := &world{a: a, b: b}
	agreed := link{fixed: true, psnA: scenePSNA, psnB: scenePSNB, minRNRTimer: sc.rnr}
	if w.rc, err = connectLink(gorxe.QPTypeRC, a, b, agreed); err != nil {
		return err
	}
	if w.ud, err = connectLink(gorxe.QPTypeUD, a, b, agreed); err != nil {
		return err
	}
	av := b.addressVector(a)
	if w.udAH, err = a.pd.CreateAH(&av); err != nil {
		return err
	}

	sctx, cancel := context.WithTimeout(ctx, o.Timeout)
	verified, err := sc.run(sctx, w, &cues{rnrNAK: rnr})
	cancel()
	closeAll() // no tap runs after this
	for _, l := range n.take() {
		fmt.Fprintf(out, "    %s\n", l)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  ✓ %s\n", verified)
	if err := rec.close(); err != nil {
		return err
	}
	return writeScene(dir, sc.name, wire.Bytes(), out)
}

// writeScene writes a scene's capture and its ladder diagram.
func writeScene(dir, name string, capture []byte, out io.Writer) (err error) {
	pcap := filepath.Join(dir, name+".pcapng")
	if err := os.WriteFile(pcap, capture, 0o644); err != nil {
		return err
	}
	svg := filepath.Join(dir, name+".svg")
	f, err := os.Create(svg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	if err := drawLadder(capture, trace.FormatSVG, name+".pcapng", f); err != nil {
		return err
	}
	fmt.Fprintf(out, "  wrote %s and %s\n", pcap, svg)
	return nil
}
