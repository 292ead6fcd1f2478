package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/observe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/trace"
)

// Options configure a demo run.
type Options struct {
	A, B    netip.Addr        // the two devices' addresses; default 127.0.0.1 and 127.0.0.2
	Port    uint16            // UDP port of both devices; 0 means 4791
	Faults  gorxe.FaultConfig // impairments both devices apply to what they send
	Timeout time.Duration     // per step; default 10 s
	Logger  *slog.Logger      // receives both devices' events; nil discards them

	// Pcap, when set, receives a pcapng capture of every datagram either device handed to the
	// network, in order, numbered as the narration numbers them; what fault injection did to
	// one (lost, duplicate, corrupted, delayed) is its packet comment.
	Pcap io.Writer
	// Trace, when set, receives the ladder diagram of the run in TraceFormat: what gorxe trace
	// draws of the Pcap capture, the packets fault injection dropped included.
	Trace       io.Writer
	TraceFormat trace.Format
	// Observe serves the devices' counters while the demo runs (-metrics) and prints them at the
	// end (-counters).
	Observe observe.Options
}

// Run performs the narrated walkthrough, writing it to out. It returns an error if a step failed
// or its data did not verify.
func Run(ctx context.Context, o Options, out io.Writer) (err error) {
	o.defaults()
	rec, err := o.recorder()
	if err != nil {
		return err
	}
	nar := newNarrator(pathMTU.Bytes(), rec.recording)
	nar.names[o.A.Unmap()], nar.names[o.B.Unmap()] = "A", "B"
	var open []*side
	defer func() { err = rec.finish(err, open) }()

	a, err := openSide("A", o.A, &o, nar.tap)
	if err != nil {
		return err
	}
	open = append(open, a)
	b, err := openSide("B", o.B, &o, nar.tap)
	if err != nil {
		return err
	}
	open = append(open, b)
	obs, err := o.Observe.Start(out, a.dev, b.dev)
	if err != nil {
		return err
	}
	defer obs.End(out)

	fmt.Fprintf(out, "gorxe demo: two RoCEv2 devices in this process, talking over UDP port %d.\n\n", o.port())
	for _, s := range []*side{a, b} {
		fmt.Fprintf(out, "  device %s  %-22s GID[%d] %s (%v)\n", s.name, s.dev.Name(), s.gidIndex, s.gid, s.gid.Addr())
	}
	if o.Faults.Enabled() {
		fmt.Fprintf(out, "\n  Both devices impair what they send: %s\n%s", o.Faults, faultKey)
	}

	w := &world{a: a, b: b}
	fmt.Fprintf(out, "\nStep 0: connect. Each side creates an RC, a UC and a UD queue pair and moves them\n"+
		"RESET → INIT → RTR → RTS, exchanging QP numbers and first PSNs out of band (here: in memory).\n")
	if err := w.connect(); err != nil {
		return err
	}
	fmt.Fprintf(out, "  RC: A QPN %#06x ↔ B QPN %#06x   UC: %#06x ↔ %#06x   UD: %#06x, %#06x\n",
		w.rc.a.QPN(), w.rc.b.QPN(), w.uc.a.QPN(), w.uc.b.QPN(), w.ud.a.QPN(), w.ud.b.QPN())

	for i, s := range steps {
		if ctx.Err() != nil {
			return interrupted(out, i, a, b)
		}
		fmt.Fprintf(out, "\nStep %d: %s\n", i+1, s.title)
		for _, l := range splitLines(s.about) {
			fmt.Fprintf(out, "  %s\n", l)
		}
		sctx, cancel := context.WithTimeout(ctx, o.Timeout)
		verified, err := s.run(sctx, w)
		cancel()
		for _, l := range nar.take() {
			fmt.Fprintf(out, "    %s\n", l)
		}
		if err != nil && ctx.Err() != nil {
			fmt.Fprintf(out, "  ✗ interrupted\n")
			return interrupted(out, i, a, b)
		}
		if err != nil {
			fmt.Fprintf(out, "  ✗ %v\n", err)
			return fmt.Errorf("step %d (%s): %w", i+1, s.title, err)
		}
		fmt.Fprintf(out, "  ✓ %s\n", verified)
	}
	printCounters(out, a, b)
	fmt.Fprintf(out, "\nAll %d steps verified.\n", len(steps))
	return nil
}

// connect sets up the RC, UC and UD QP pairs and A's address handle for B.
func (w *world) connect() error {
	var err error
	if w.rc, err = connect(gorxe.QPTypeRC, w.a, w.b); err != nil {
		return err
	}
	if w.uc, err = connect(gorxe.QPTypeUC, w.a, w.b); err != nil {
		return err
	}
	if w.ud, err = connect(gorxe.QPTypeUD, w.a, w.b); err != nil {
		return err
	}
	av := w.b.addressVector(w.a)
	w.udAH, err = w.a.pd.CreateAH(&av)
	return err
}

// interrupted ends a demo stopped before step i (counted from 0) with what it did so far: the
// devices' counters, and how many steps were verified.
func interrupted(out io.Writer, i int, a, b *side) error {
	printCounters(out, a, b)
	return fmt.Errorf("%w after %d of %d steps verified", tool.ErrInterrupted, i, len(steps))
}

func printCounters(out io.Writer, sides ...*side) {
	fmt.Fprintf(out, "\nCounters:\n")
	for _, s := range sides {
		fmt.Fprintf(out, "  %s ", s.name)
		for name, v := range s.dev.Counters().All() {
			if v != 0 {
				fmt.Fprintf(out, " %s=%d", name, v)
			}
		}
		fmt.Fprintln(out)
	}
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
