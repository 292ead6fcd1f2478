//go:build linux

package main

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"
)

// config is what one run measures.
type config struct {
	duration   time.Duration
	trials     int
	window     time.Duration
	pollCalls  int
	sections   map[string]bool
	pingRings  []ringMode
	streamRing ringMode
	src, dst   netip.Addr
	uringErr   error // why io_uring cannot be used here, nil if it can
}

func main() {
	var (
		duration   = flag.Duration("duration", time.Second, "length of each ping-pong and stream row")
		trials     = flag.Int("trials", 200, "datagrams per visibility row")
		window     = flag.Duration("window", 20*time.Millisecond, "how long a visibility trial spins before it enters the kernel")
		sections   = flag.String("sections", "poll,visibility,pingpong,stream", "comma-separated sections to run")
		pingRings  = flag.String("ping-rings", "default,coop+flag,defer+flag,defer", "ring modes of the io_uring ping-pong rows")
		streamRing = flag.String("stream-ring", "defer+flag", "ring mode of the io_uring stream rows")
		src        = flag.String("src", "127.0.0.1", "address of the sending side")
		dst        = flag.String("dst", "127.0.0.2", "address of the receiving side")
		asJSON     = flag.Bool("json", false, "print JSON instead of Markdown tables")
	)
	flag.Parse()
	cfg, err := parseConfig(*duration, *trials, *window, *sections, *pingRings, *streamRing, *src, *dst)
	if err != nil {
		fmt.Fprintln(os.Stderr, "uring:", err)
		os.Exit(2)
	}
	if r, err := newRing(8, 16, 0); errors.Is(err, errRefused) {
		cfg.uringErr = err
	} else if err != nil {
		cfg.uringErr = fmt.Errorf("%w: %v", errRefused, err)
	} else {
		r.close()
	}
	rep, err := measure(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "uring:", err)
		os.Exit(1)
	}
	if *asJSON {
		err = rep.writeJSON(os.Stdout)
	} else {
		err = rep.writeMarkdown(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "uring:", err)
		os.Exit(1)
	}
}

func parseConfig(duration time.Duration, trials int, window time.Duration, sections, pingRings, streamRing, src, dst string) (config, error) {
	c := config{duration: duration, trials: trials, window: window, pollCalls: 200000, sections: map[string]bool{}}
	if duration <= 0 || trials <= 0 || window <= 0 {
		return c, errors.New("-duration, -trials and -window must be positive")
	}
	for _, s := range strings.Split(sections, ",") {
		switch s = strings.TrimSpace(s); s {
		case "poll", "visibility", "pingpong", "stream":
			c.sections[s] = true
		default:
			return c, fmt.Errorf("-sections: unknown section %q", s)
		}
	}
	for _, m := range strings.Split(pingRings, ",") {
		mode, err := lookupMode(strings.TrimSpace(m))
		if err != nil {
			return c, fmt.Errorf("-ping-rings: %w", err)
		}
		c.pingRings = append(c.pingRings, mode)
	}
	var err error
	if c.streamRing, err = lookupMode(streamRing); err != nil {
		return c, fmt.Errorf("-stream-ring: %w", err)
	}
	if c.src, err = netip.ParseAddr(src); err != nil || !c.src.Is4() {
		return c, fmt.Errorf("-src: %q is not an IPv4 address", src)
	}
	if c.dst, err = netip.ParseAddr(dst); err != nil || !c.dst.Is4() {
		return c, fmt.Errorf("-dst: %q is not an IPv4 address", dst)
	}
	return c, nil
}

// measure runs the sections cfg asks for. An io_uring row that cannot run here (the kernel
// refuses io_uring or one of its flags) is kept with the reason instead of figures.
func measure(cfg config) (*report, error) {
	rep := &report{DurationS: cfg.duration.Seconds(), Src: cfg.src.String(), Dst: cfg.dst.String()}
	if cfg.uringErr != nil {
		rep.Uring = cfg.uringErr.Error()
	}
	if cfg.sections["poll"] {
		rows, err := pollCosts(cfg)
		if err != nil {
			return nil, err
		}
		rep.Poll = rows
	}
	if cfg.sections["visibility"] {
		for _, m := range ringModes {
			row, err := visibilityRow{Mode: m.Name}, cfg.uringErr
			if err == nil {
				row, err = visibility(cfg, m)
			}
			if row.Skipped, err = skipReason(err); err != nil {
				return nil, err
			}
			rep.Visibility = append(rep.Visibility, row)
		}
		for _, m := range []ringMode{ringModes[0], ringModes[2], ringModes[5]} {
			row, err := affinityRow{Mode: m.Name}, cfg.uringErr
			if err == nil {
				row, err = affinity(cfg, m)
			}
			if row.Skipped, err = skipReason(err); err != nil {
				return nil, err
			}
			rep.Affinity = append(rep.Affinity, row)
		}
	}
	if cfg.sections["pingpong"] {
		row, err := pingPong(cfg, "sendmmsg + recvmmsg spin", newMmsgSide)
		if err != nil {
			return nil, err
		}
		rep.PingPong = append(rep.PingPong, row)
		for _, m := range cfg.pingRings {
			label := "io_uring SEND + multishot RECV, " + m.Name
			row, err := pingPongRow{Path: label, DatagramBytes: pingSize}, cfg.uringErr
			if err == nil {
				row, err = pingPong(cfg, label, func(fd int) (pingSide, error) { return newUringSide(fd, m) })
			}
			if row.Skipped, err = skipReason(err); err != nil {
				return nil, err
			}
			rep.PingPong = append(rep.PingPong, row)
		}
	}
	if cfg.sections["stream"] {
		for _, p := range streamPairs {
			row := streamRow{Sender: p[0], Receiver: p[1]}
			var err error
			if cfg.uringErr == nil || (!isUring(p[0]) && !isUring(p[1])) {
				row, err = stream(cfg, p[0], p[1], cfg.streamRing)
			} else {
				err = cfg.uringErr
			}
			if row.Skipped, err = skipReason(err); err != nil {
				return nil, err
			}
			rep.Stream = append(rep.Stream, row)
		}
	}
	return rep, nil
}

// skipReason turns a refused io_uring (or ring flag) into the row's reason and passes other
// errors on.
func skipReason(err error) (string, error) {
	if errors.Is(err, errRefused) {
		return err.Error(), nil
	}
	return "", err
}
