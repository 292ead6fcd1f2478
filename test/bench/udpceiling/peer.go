package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gorxe/gorxe/netio"
)

// tally is what a sink peer reports when its stdin closes.
type tally struct {
	Datagrams uint64 `json:"datagrams"`
	Bytes     uint64 `json:"bytes"`
	// The window runs from the return of the first read to the return of the last; the rates
	// count only what the reads after the first returned, so that neither the sender's start-up
	// nor the drain wait after it dilutes them.
	WindowNS        int64  `json:"window_ns"`
	WindowDatagrams uint64 `json:"window_datagrams"`
	WindowBytes     uint64 `json:"window_bytes"`
	// CPUNS is the user and system time the peer process used from listening to the end.
	CPUNS    int64          `json:"cpu_ns"`
	Counters netio.Counters `json:"counters"`
}

// runPeer is the re-executed process: it listens on dst, prints "ready <port>", serves as a sink
// or an echo (echoRole) until its stdin closes, and then prints its tally as one JSON line.
func runPeer(role, mode, dst string) error {
	addr, err := netip.ParseAddr(dst)
	if err != nil {
		return err
	}
	c, err := listen(path(mode), addr)
	if err != nil {
		return err
	}
	cpu0 := cpuTime()
	fmt.Printf("ready %d\n", c.LocalAddrs()[0].Port())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		c.Close()
	}()
	var t tally
	switch role {
	case "sink":
		t = sink(c)
	case echoRole(waitSleep):
		echo(c, waitSleep.receiver(c))
	case echoRole(waitPoll):
		echo(c, waitPoll.receiver(c))
	default:
		return fmt.Errorf("unknown peer role %q", role)
	}
	t.Counters = c.Counters()
	t.CPUNS = cpuTime() - cpu0
	return json.NewEncoder(os.Stdout).Encode(t)
}

// sink reads until the Conn closes.
func sink(c *netio.UDPConn) tally {
	msgs := receiveBuffers()
	var t tally
	var first, last time.Time
	for {
		for i := range msgs {
			msgs[i].Buf = msgs[i].Buf[:cap(msgs[i].Buf)]
		}
		n, err := c.Receive(msgs)
		if err != nil {
			break
		}
		now := time.Now()
		bytes := 0
		for _, m := range msgs[:n] {
			bytes += len(m.Buf)
		}
		t.Datagrams += uint64(n)
		t.Bytes += uint64(bytes)
		if first.IsZero() {
			first = now
		} else {
			t.WindowDatagrams += uint64(n)
			t.WindowBytes += uint64(bytes)
		}
		last = now
	}
	t.WindowNS = int64(last.Sub(first))
	return t
}

// echoRole is the peer role that echoes, waiting for each datagram as w says.
func echoRole(w wait) string { return "echo-" + string(w) }

// echo sends every datagram back to where it came from until the Conn closes, reading with
// receive (see wait.receiver).
func echo(c *netio.UDPConn, receive func([]netio.Message) (int, error)) {
	msgs := receiveBuffers()
	for {
		for i := range msgs {
			msgs[i].Buf = msgs[i].Buf[:cap(msgs[i].Buf)]
		}
		n, err := receive(msgs)
		if err != nil {
			return
		}
		for i := range msgs[:n] {
			msgs[i].Dst, msgs[i].Src = msgs[i].Src, netip.AddrPort{}
		}
		if _, err := c.Send(msgs[:n]); err != nil {
			return
		}
	}
}

// cpuTime returns the user and system time this process has used, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func receiveBuffers() []netio.Message {
	msgs := make([]netio.Message, netio.IdealBatchSize)
	for i := range msgs {
		msgs[i].Buf = make([]byte, maxDatagram)
	}
	return msgs
}

// peerProc is a running peer.
type peerProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	addr  netip.AddrPort
}

// startPeer re-executes this program as a peer of the given role on dst and waits until it
// listens.
func startPeer(role string, p path, dst netip.Addr) (*peerProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-peer", role, "-mode", string(p), "-dst", dst.String())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pp := &peerProc{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	line, err := pp.out.ReadString('\n')
	port, perr := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(line), "ready "), 10, 16)
	if err != nil || perr != nil {
		stdin.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("peer did not start: %q", line)
	}
	pp.addr = netip.AddrPortFrom(dst, uint16(port))
	return pp, nil
}

// finish stops the peer and returns its tally.
func (pp *peerProc) finish() (tally, error) {
	pp.stdin.Close()
	var t tally
	derr := json.NewDecoder(pp.out).Decode(&t)
	werr := pp.cmd.Wait()
	if derr != nil {
		return t, fmt.Errorf("peer tally: %w", derr)
	}
	return t, werr
}
