package pingpong

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/gidtext"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/oob"
)

// Run runs one side of a pingpong test: it prints the C tool's lines on stdout, and on stderr
// only what the C tool does not print (the fault-injection notes, the device's log), and returns
// the reason it failed, if it did, as one line.
func Run(ctx context.Context, o Options, stdout, stderr io.Writer) (err error) {
	s := &session{o: o, stdout: stdout, stderr: stderr}
	defer func() {
		if cerr := s.close(); err == nil {
			err = cerr
		}
	}()
	if err := s.open(); err != nil {
		return err
	}
	if got := s.postRecv(o.RxDepth); got < o.RxDepth {
		return fmt.Errorf("Couldn't post receive (%d)", got)
	}
	if o.Events {
		if err := s.cq.ReqNotify(false); err != nil {
			return fmt.Errorf("Couldn't request CQ notification: %w", err)
		}
	}
	mine, err := s.localDests()
	if err != nil {
		return err
	}

	// The server listens before it prints its address, so whoever waits for that line can start
	// the client at once.
	var ln *oob.Listener
	if o.Server == "" {
		if ln, err = oob.Listen(ctx, o.Port); err != nil {
			return err
		}
		defer ln.Close()
	}
	for _, d := range mine {
		printDest(stdout, "local address: ", d, o.Kind == UD)
	}
	count := 1
	if o.Kind == SRQ {
		count = srqMsgs
	}
	var remote []Dest
	if o.Server != "" {
		remote, err = clientExchange(ctx, o.Server, o.Port, o.Timeout, mine, count)
	} else {
		remote, err = serverExchange(ctx, ln, o.Timeout, mine, count, func(r []Dest) error {
			if err := s.connect(mine, r); err != nil {
				return fmt.Errorf("Couldn't connect to remote QP: %w", err)
			}
			return nil
		})
	}
	if err != nil {
		return err
	}
	for _, d := range remote[:len(mine)] {
		printDest(stdout, "remote address:", d, false)
	}
	if o.Server != "" {
		if err := s.connect(mine, remote); err != nil {
			return err
		}
		if o.Check {
			markPages(s.payload(), s.pageSize)
		}
	}
	if o.Kind == UD {
		s.sendWR[0].UD = gorxe.UDInfo{AH: s.ah, RemoteQPN: remote[0].QPN, RemoteQKey: udQKey}
	}

	t := &traffic{s: s, iters: o.Iters, pending: make([]int, len(s.qps)), routs: o.RxDepth, rearmAt: 1,
		wcs: make([]gorxe.WC, 2)}
	if o.Kind == SRQ {
		t.rearmAt = o.NumQP
		t.wcs = make([]gorxe.WC, o.NumQP+o.RxDepth)
	}
	start := time.Now()
	err = t.run(ctx, o.Server != "")
	elapsed := time.Since(start)
	if s.cq != nil && t.cqEvents > 0 {
		if aerr := s.cq.AckEvents(t.cqEvents); aerr != nil && err == nil {
			err = aerr
		}
	}
	if err != nil {
		// Interrupted, the run still reports the round trips it completed.
		if done := min(t.scnt, t.rcnt); ctx.Err() != nil && done > 0 {
			printSummary(stdout, o.Size, done, elapsed)
		}
		return err
	}
	printSummary(stdout, o.Size, o.Iters, elapsed)
	if o.Server == "" && o.Check {
		for _, p := range badPages(s.payload(), s.pageSize, o.Kind) {
			fmt.Fprintf(stdout, "invalid data in page %d\n", p)
		}
	}
	return nil
}

// localDests gives each QP its address: LID, QPN, a random 24-bit PSN and the GID at -g.
func (s *session) localDests() ([]Dest, error) {
	pa, err := s.dev.QueryPort(uint8(s.o.IBPort))
	if err != nil {
		return nil, fmt.Errorf("Couldn't get port info: %w", err)
	}
	var gid gorxe.GID
	if s.o.GIDIndex >= 0 {
		if gid, err = s.dev.QueryGID(s.o.GIDIndex); err != nil {
			if s.o.Kind == RC || s.o.Kind == UC {
				return nil, fmt.Errorf("can't read sgid of index %d: %w", s.o.GIDIndex, err)
			}
			return nil, fmt.Errorf("Could not get local gid for gid index %d: %w", s.o.GIDIndex, err)
		}
	}
	out := make([]Dest, len(s.qps))
	for i, q := range s.qps {
		out[i] = Dest{LID: pa.LID, QPN: q.QPN(), PSN: rand.Uint32() & 0xffffff, GID: gid}
	}
	return out, nil
}

// payload is the part of the buffer messages are sent from and checked in.
func (s *session) payload() []byte {
	b := s.buf.Bytes()
	if s.o.Kind == UD {
		b = b[gorxe.GRHSize:]
	}
	return b[:s.o.Size]
}

// markPages sets the first byte of every page to zero, the marker the C clients send with -c.
func markPages(b []byte, pageSize int) {
	for i := 0; i < len(b); i += pageSize {
		b[i] = 0
	}
}

// badPages lists the pages of b that differ from what a -c client sends: the tool's fill byte with
// the first byte of every page zeroed. The C tools look at the marker bytes only.
func badPages(b []byte, pageSize int, k Kind) []int {
	fill := make([]byte, len(b))
	fillBuffer(fill, k)
	markPages(fill, pageSize)
	var bad []int
	for p := 0; p*pageSize < len(b); p++ {
		lo, hi := p*pageSize, min((p+1)*pageSize, len(b))
		if string(b[lo:hi]) != string(fill[lo:hi]) {
			bad = append(bad, p)
		}
	}
	return bad
}

// printDest prints one address line; ud_pingpong's local line has a colon before "GID".
func printDest(w io.Writer, label string, d Dest, udLocal bool) {
	sep := ","
	if udLocal {
		sep = ":"
	}
	fmt.Fprintf(w, "  %s LID 0x%04x, QPN 0x%06x, PSN 0x%06x%s GID %s\n", label, d.LID, d.QPN, d.PSN, sep, gidtext.Format(d.GID))
}

// printSummary prints the two result lines. The C tools keep the elapsed microseconds in a float,
// so the per-iteration figure is computed in single precision too.
func printSummary(w io.Writer, size, iters int, elapsed time.Duration) {
	usec := float32(elapsed.Microseconds())
	bytes := int64(size) * int64(iters) * 2
	fmt.Fprintf(w, "%d bytes in %.2f seconds = %.2f Mbit/sec\n", bytes, float64(usec)/1e6, float64(bytes)*8/float64(usec))
	fmt.Fprintf(w, "%d iters in %.2f seconds = %.2f usec/iter\n", iters, float64(usec)/1e6, float64(usec/float32(iters)))
}
