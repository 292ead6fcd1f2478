package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gorxe/gorxe/cm/mad"
)

const (
	// captureBufferKiB is tcpdump's kernel buffer (-B).
	captureBufferKiB = 256 << 10
	// captureSnaplen holds a whole frame at MTU 9000.
	captureSnaplen = 9216
	// captureSettle outlasts libpcap's 1 s block timeout: the kernel hands a partly filled block
	// to tcpdump only when it expires, and tcpdump stopped before that loses the block's packets
	// without counting them as dropped.
	captureSettle = 1300 * time.Millisecond
)

// capture is a running tcpdump writing one run's RoCEv2 packets to a pcap file.
type capture struct {
	file   string
	cmd    *exec.Cmd
	stderr strings.Builder
	done   chan struct{}
}

// startCapture captures UDP port 4791 on iface into file and returns once tcpdump listens.
func startCapture(iface, file string) (*capture, error) {
	c := &capture{file: file, done: make(chan struct{})}
	// A large ring and block-wise delivery (no immediate mode, no per-packet flush) keep up with
	// multi-MiB messages; dropped() reads tcpdump's own count at the end.
	c.cmd = exec.Command("tcpdump", "-i", iface, "-s", fmt.Sprint(captureSnaplen), "-n", "-B", fmt.Sprint(captureBufferKiB),
		"-w", file, "udp", "port", fmt.Sprint(roceUDP))
	pipe, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting tcpdump: %w", err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		signalled := false
		for sc.Scan() {
			c.stderr.WriteString(sc.Text() + "\n")
			if !signalled && strings.Contains(sc.Text(), "listening on") {
				signalled = true
				close(ready)
			}
		}
		io.Copy(io.Discard, pipe)
		c.cmd.Wait()
		if !signalled {
			close(ready)
		}
		close(c.done)
	}()
	select {
	case <-ready:
	case <-time.After(15 * time.Second):
	}
	select {
	case <-c.done:
		return nil, fmt.Errorf("tcpdump on %s exited: %s", iface, c.stderr.String())
	default:
	}
	return c, nil
}

// stop ends the capture once every packet has reached tcpdump, letting it flush the file.
func (c *capture) stop() {
	time.Sleep(captureSettle)
	c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
}

// droppedRE matches tcpdump's closing statistics line.
var droppedRE = regexp.MustCompile(`(\d+) packets? dropped by kernel`)

// dropped is how many packets the kernel dropped before tcpdump saw them (-1 if it did not say).
func (c *capture) dropped() int {
	m := droppedRE.FindStringSubmatch(c.stderr.String())
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// captureCheck is what `gorxe dump -json` found in a capture.
type captureCheck struct {
	Packets  int
	BadICRC  int
	BySrc    map[string]int // packets per source IP
	Opcodes  map[string]int
	Errors   string // dump's complaints about undecodable frames
	FirstBad string
	Reads    map[string]*readStats // RDMA READ responses per source IP
	// Refusals counts, per source IP, the CM's answers that no one listens on the service ID: a
	// REJ with reason 8 or a SIDR_REP with status 1.
	Refusals map[string]int
}

// readStats counts the RDMA READ response packets one peer sent: every one, and those with a
// PSN (per destination QP) not seen before, which are the packets the READs needed. A responder
// that sends faster than its requester takes the packets in sends the lost ones, and what the
// requester discarded after them, again.
type readStats struct {
	Packets int
	Needed  int
	Bytes   int64 // payload of the needed packets: the bytes read
	seen    map[[2]uint32]bool
}

// add counts one READ response to destination QP qpn.
func (r *readStats) add(qpn, psn uint32, payload int) {
	r.Packets++
	if k := [2]uint32{qpn, psn}; !r.seen[k] {
		r.seen[k] = true
		r.Needed++
		r.Bytes += int64(payload)
	}
}

// ratio is the packets sent per packet needed (1 when nothing was sent twice).
func (r *readStats) ratio() float64 { return float64(r.Packets) / float64(max(r.Needed, 1)) }

// String says how many packets the READs took: "14252 pkts for 10240 needed (1.39x, 356 per MiB read)".
func (r *readStats) String() string {
	return fmt.Sprintf("%d pkts for %d needed (%.2fx, %.0f per MiB read)", r.Packets, r.Needed, r.ratio(),
		float64(r.Packets)/float64(max(r.Bytes, 1))*(1<<20))
}

// maxReadResend bounds the READ response packets gorxe may send per packet needed on a lossless
// network. A responder that keeps to its requester's pace (gorxe paces READ responses by the
// requests it repeats) sends few twice; one that bursts a 4 MiB READ at kernel rxe in a VM sent
// 2.6 times as many.
const maxReadResend = 1.5

// isReadResponse reports whether an RC opcode is an RDMA READ response (FIRST, MIDDLE, LAST, ONLY).
func isReadResponse(opcode uint8) bool { return opcode >= 0x0D && opcode <= 0x10 }

// dumpPacket is the part of a `gorxe dump -json` line the check reads.
type dumpPacket struct {
	Frame      int    `json:"frame"`
	Src        string `json:"src"`
	Dst        string `json:"dst"`
	Opcode     uint8  `json:"opcode"`
	OpName     string `json:"opname"`
	DQPN       uint32 `json:"dqpn"`
	PSN        uint32 `json:"psn"`
	PayloadLen int    `json:"payload_len"`
	ICRC       string `json:"icrc"`
	ICRCOK     bool   `json:"icrc_ok"`
	CM         string `json:"cm"`
	MAD        struct {
		RejReason  *uint16 `json:"infiniband.cm.rej.reason"`
		SIDRStatus *uint8  `json:"infiniband.cm.sidr_rep.status"`
	} `json:"mad"`
}

// refusal reports whether p is a CM answer that no one listens on the service ID it named.
func (p *dumpPacket) refusal() bool {
	switch {
	case p.MAD.RejReason != nil:
		return mad.RejectReason(*p.MAD.RejReason) == mad.RejInvalidServiceID
	case p.MAD.SIDRStatus != nil:
		return mad.SIDRStatus(*p.MAD.SIDRStatus) == mad.SIDRUnsupported
	}
	return false
}

// verifyCapture runs `gorxe dump -json` on file and checks every packet's ICRC.
func verifyCapture(gorxe, file string) (captureCheck, error) {
	cmd := exec.Command(gorxe, "dump", "-json", file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return captureCheck{}, err
	}
	if err := cmd.Start(); err != nil {
		return captureCheck{}, err
	}
	cc := readDump(out)
	io.Copy(io.Discard, out)
	err = cmd.Wait()
	cc.Errors += stderr.String()
	if err != nil {
		return cc, fmt.Errorf("gorxe dump -json %s: %w\n%s", file, err, stderr.String())
	}
	return cc, nil
}

// readDump tallies the packets of `gorxe dump -json`'s output.
func readDump(r io.Reader) captureCheck {
	cc := captureCheck{BySrc: map[string]int{}, Opcodes: map[string]int{}, Reads: map[string]*readStats{}, Refusals: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var p dumpPacket
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			cc.Errors += "unparsable dump line: " + sc.Text() + "\n"
			continue
		}
		src := hostOf(p.Src)
		cc.Packets++
		cc.BySrc[src]++
		cc.Opcodes[p.OpName]++
		if p.refusal() {
			cc.Refusals[src]++
		}
		if isReadResponse(p.Opcode) {
			r := cc.Reads[src]
			if r == nil {
				r = &readStats{seen: map[[2]uint32]bool{}}
				cc.Reads[src] = r
			}
			r.add(p.DQPN, p.PSN, p.PayloadLen)
		}
		if !p.ICRCOK {
			cc.BadICRC++
			if cc.FirstBad == "" {
				cc.FirstBad = sc.Text()
			}
		}
	}
	if err := sc.Err(); err != nil {
		cc.Errors += "reading the dump: " + err.Error() + "\n"
	}
	return cc
}

// hostOf strips the port from "addr:port" or "[addr]:port".
func hostOf(s string) string {
	if i := strings.LastIndex(s, ":"); i > 0 {
		s = s[:i]
	}
	return strings.Trim(s, "[]")
}

// problem says why the capture fails the run, or "" when it passes: it must hold packets from
// both peers and every ICRC must verify.
func (cc captureCheck) problem(peers ...string) string {
	var p []string
	if cc.Packets == 0 {
		p = append(p, "no RoCEv2 packets captured")
	}
	for _, peer := range peers {
		if cc.BySrc[peer] == 0 {
			p = append(p, "no packets from "+peer)
		}
	}
	if cc.BadICRC > 0 {
		p = append(p, fmt.Sprintf("%d of %d packets with a bad ICRC, first: %s", cc.BadICRC, cc.Packets, cc.FirstBad))
	}
	if strings.TrimSpace(cc.Errors) != "" {
		p = append(p, "dump errors: "+strings.TrimSpace(cc.Errors))
	}
	return strings.Join(p, "; ")
}

// summary is a short description for the report: packets per source.
func (cc captureCheck) summary() string {
	srcs := make([]string, 0, len(cc.BySrc))
	for s := range cc.BySrc {
		srcs = append(srcs, s)
	}
	sort.Strings(srcs)
	parts := make([]string, 0, len(srcs))
	for _, s := range srcs {
		parts = append(parts, fmt.Sprintf("%d", cc.BySrc[s]))
	}
	return fmt.Sprintf("%d pkts (%s) icrc ok %d", cc.Packets, strings.Join(parts, "/"), cc.Packets-cc.BadICRC)
}

// hostRxDrops counts the packets arriving from the guests that the host dropped before a capture
// could see them: the tap's rx_dropped and every CPU's input backlog drops (the second column of
// /proc/net/softnet_stat). On a loaded host a burst from the guest can overflow the backlog; rxe
// counted those packets as sent, the tap capture never saw them, and the peer recovers them as
// lost. -1 when the counts cannot be read.
func hostRxDrops(iface string) int64 {
	b, err := os.ReadFile(filepath.Join("/sys/class/net", iface, "statistics", "rx_dropped"))
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return -1
	}
	stat, err := os.ReadFile("/proc/net/softnet_stat")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(strings.TrimSpace(string(stat)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			return -1
		}
		d, err := strconv.ParseUint(f[1], 16, 32)
		if err != nil {
			return -1
		}
		n += int64(d)
	}
	return n
}
