// Command udpceiling measures what plain UDP carries between two processes on this machine, the
// ceiling gorxe's own figures are compared against: datagram and byte rates with one
// sendmmsg/recvmmsg entry per datagram and with segmentation and receive offload (GSO+GRO), at
// the datagram sizes of a 64-byte RoCE SEND and of full 1024- and 4096-byte-MTU packets, the
// receiver's CPU time per datagram, and the half round trip of a one-datagram ping-pong whose
// ends sleep in the receive and of one whose ends busy-poll.
//
// It moves datagrams through netio's UDP backend, the same code a gorxe device uses, so that
// gorxe's goodput divided by this ceiling isolates what the RDMA stack costs. The peer is this
// program re-executed on the second address; each row gets a fresh peer.
//
// Usage:
//
//	udpceiling [-duration 2s] [-json] [-sizes 80,1040,4112] [-paths sendmmsg,gso+gro]
//	           [-src 127.0.0.1] [-dst 127.0.0.2]
package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	var (
		duration = flag.Duration("duration", 2*time.Second, "length of each measurement")
		asJSON   = flag.Bool("json", false, "print JSON instead of a Markdown table")
		sizes    = flag.String("sizes", "80,1040,4112", "comma-separated UDP payload sizes in bytes")
		pathList = flag.String("paths", "sendmmsg,gso+gro", "comma-separated I/O paths: sendmmsg, gso+gro, gro")
		src      = flag.String("src", "127.0.0.1", "address the measuring process sends from")
		dst      = flag.String("dst", "127.0.0.2", "address of the peer process")
		peer     = flag.String("peer", "", "internal: run as the peer (sink, echo-sleep or echo-poll)")
		mode     = flag.String("mode", "", "internal: the peer's I/O path")
	)
	flag.Parse()
	if *peer != "" {
		if err := runPeer(*peer, *mode, *dst); err != nil {
			fmt.Fprintln(os.Stderr, "udpceiling peer:", err)
			os.Exit(1)
		}
		return
	}
	cfg, err := parseConfig(*duration, *sizes, *pathList, *src, *dst)
	if err != nil {
		fmt.Fprintln(os.Stderr, "udpceiling:", err)
		os.Exit(2)
	}
	rep, err := measure(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "udpceiling:", err)
		os.Exit(1)
	}
	if *asJSON {
		err = rep.writeJSON(os.Stdout)
	} else {
		err = rep.writeMarkdown(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "udpceiling:", err)
		os.Exit(1)
	}
}

// config is what one run measures.
type config struct {
	duration time.Duration
	sizes    []int
	paths    []path
	src, dst netip.Addr
}

func parseConfig(duration time.Duration, sizes, paths, src, dst string) (config, error) {
	c := config{duration: duration}
	if duration <= 0 {
		return c, fmt.Errorf("-duration must be positive")
	}
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < minDatagram || n > maxDatagram {
			return c, fmt.Errorf("-sizes: %q is not a size from %d to %d", f, minDatagram, maxDatagram)
		}
		c.sizes = append(c.sizes, n)
	}
	for _, f := range strings.Split(paths, ",") {
		p := path(strings.TrimSpace(f))
		if _, err := p.udpConfig(); err != nil {
			return c, fmt.Errorf("-paths: %w", err)
		}
		c.paths = append(c.paths, p)
	}
	var err error
	if c.src, err = netip.ParseAddr(src); err != nil {
		return c, fmt.Errorf("-src: %w", err)
	}
	if c.dst, err = netip.ParseAddr(dst); err != nil {
		return c, fmt.Errorf("-dst: %w", err)
	}
	if c.src.Is4() != c.dst.Is4() {
		return c, fmt.Errorf("-src and -dst must be of one address family")
	}
	return c, nil
}
