package main

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gorxe/gorxe/test/interop/guestrpc"
)

// endpoint is one side of a run: kernel rxe in a VM, or gorxe on the host.
type endpoint interface {
	// name is how the report names the side: "rxe" or "gorxe".
	name() string
	// argv is the command line of tool with the common options opts (and the server's address
	// last, for a client).
	argv(t tool, opts []string) ([]string, error)
	addr(family int) netip.Addr
	// gidIndex is the local GID index of the address of family (ipv4, ipv6 or linkLocal).
	gidIndex(family int) (int, error)
	start(argv []string, timeout time.Duration) (job, error)
	// listening waits until the server j listens on TCP port; it gives up early if j ends.
	listening(j job, port int, timeout time.Duration) (bool, error)
	// cmArgv is the command line of RDMA-CM tool t with options opts: such a tool finds its
	// device from the address it is given, so no device options are added.
	cmArgv(t tool, opts []string) []string
	// cmListening waits until the RDMA-CM server j listens on port, which no socket shows.
	cmListening(j job, t tool, port int, timeout time.Duration) (bool, error)
}

// job is a command started on an endpoint.
type job interface {
	kill()
	// wait collects the result, giving up (false) after d.
	wait(d time.Duration) (guestrpc.Result, bool)
}

// rxeEndpoint runs the C tools against rxe0 in a VM.
type rxeEndpoint struct {
	v    *vm
	gids map[int]int // family -> GID index, read from sysfs
}

func (e *rxeEndpoint) name() string { return "rxe" }

func (e *rxeEndpoint) argv(t tool, opts []string) ([]string, error) {
	dev := []string{"-d", "rxe0", "-i", "1"}
	return append(append([]string{t.c}, dev...), opts...), nil
}

func (e *rxeEndpoint) addr(family int) netip.Addr { return e.v.addr(family) }

// gidIndex finds the GID of the VM's address in rxe0's table, as the kernel filled it.
func (e *rxeEndpoint) gidIndex(family int) (int, error) {
	if i, ok := e.gids[family]; ok {
		return i, nil
	}
	r, err := e.v.run([]string{"sh", "-c", "cd /sys/class/infiniband/rxe0/ports/1/gids && grep -H . *"}, 20*time.Second)
	if err != nil {
		return 0, err
	}
	want := gidString(e.addr(family))
	for _, line := range strings.Split(r.Output, "\n") {
		idx, gid, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(gid) == want {
			var i int
			fmt.Sscanf(idx, "%d", &i)
			if e.gids == nil {
				e.gids = map[int]int{}
			}
			e.gids[family] = i
			return i, nil
		}
	}
	return 0, fmt.Errorf("VM %d: no GID %s in rxe0's table:\n%s", e.v.n, want, r.Output)
}

// gidString formats a as sysfs prints a GID: eight groups of four hex digits, IPv4 mapped.
func gidString(a netip.Addr) string {
	b := a.As16()
	var parts []string
	for i := 0; i < 16; i += 2 {
		parts = append(parts, fmt.Sprintf("%02x%02x", b[i], b[i+1]))
	}
	return strings.Join(parts, ":")
}

func (e *rxeEndpoint) start(argv []string, timeout time.Duration) (job, error) {
	id, err := e.v.start(argv, timeout)
	if err != nil {
		return nil, err
	}
	return &vmJob{v: e.v, id: id, timeout: timeout}, nil
}

func (e *rxeEndpoint) listening(_ job, port int, timeout time.Duration) (bool, error) {
	return e.v.listening(port, timeout)
}

func (e *rxeEndpoint) cmArgv(t tool, opts []string) []string {
	return append([]string{t.c}, opts...)
}

// cmListenPoll is how often the VM's RDMA-CM listeners are listed while waiting for a server.
const cmListenPoll = 100 * time.Millisecond

// cmListening lists the kernel's RDMA-CM IDs until one listens on port: rping -s prints nothing
// before a client connects (ucmatose prints its line before it listens), but rdma_listen puts its
// ID in LISTEN, which the rdma tool reports.
func (e *rxeEndpoint) cmListening(j job, t tool, port int, timeout time.Duration) (bool, error) {
	if t.c == mckey.c {
		return e.mcJoined(j, timeout)
	}
	want := regexp.MustCompile(fmt.Sprintf(`state LISTEN .*src-addr \S*:%d\b`, port))
	return e.waitCMID(j, want, fmt.Sprintf("no LISTEN cm_id on port %d", port), timeout)
}

// waitCMID lists the kernel's RDMA-CM IDs until one matches want, the job ends or timeout passes.
func (e *rxeEndpoint) waitCMID(j job, want *regexp.Regexp, missing string, timeout time.Duration) (bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		r, err := e.v.run([]string{"rdma", "resource", "show", "cm_id"}, 20*time.Second)
		if err != nil {
			return false, err
		}
		if want.MatchString(r.Output) {
			return true, nil
		}
		if _, ended := j.wait(0); ended || time.Now().After(deadline) {
			return false, fmt.Errorf("%s:\n%s", missing, r.Output)
		}
		time.Sleep(cmListenPoll)
	}
}

type vmJob struct {
	v       *vm
	id      int
	timeout time.Duration
	once    sync.Once
	done    chan struct{} // closed once the agent answered the one /wait
	result  guestrpc.Result
}

func (j *vmJob) kill() { j.v.killJob(j.id) }

// wait asks the agent once (it forgets a command when it answers) and lets every call share
// that answer, so a second wait after a timed-out first one still gets the result.
func (j *vmJob) wait(d time.Duration) (guestrpc.Result, bool) {
	j.once.Do(func() {
		j.done = make(chan struct{})
		go func() {
			defer close(j.done)
			r, err := j.v.wait(j.id, j.timeout)
			if err != nil {
				r = guestrpc.Result{ExitCode: -1, Error: err.Error()}
			}
			j.result = r
		}()
	})
	select {
	case <-j.done:
		return j.result, true
	case <-time.After(d):
		return guestrpc.Result{}, false
	}
}

// hostSide is what the two host endpoints share: the bridge's addresses with the GID layout
// gorxe gives an interface, and processes started on the host with env added.
type hostSide struct {
	env []string
}

func (h hostSide) addr(family int) netip.Addr {
	if family == linkLocal {
		a, _ := bridgeLinkLocal()
		return a
	}
	if family == 6 {
		return hostIP6.Addr()
	}
	return hostIP4.Addr()
}

// gidIndex follows rxe's layout, which gorxe reproduces for an interface: the link-local GID at
// 0, the IPv4-mapped address at 1, the other IPv6 address at 2.
func (h hostSide) gidIndex(family int) (int, error) {
	if family == linkLocal {
		// gorxe's GID 0 is derived from the MAC; it is usable only if the bridge has it.
		if err := bridgeHasLinkLocal(); err != nil {
			return 0, err
		}
		return 0, nil
	}
	if family == 6 {
		return 2, nil
	}
	return 1, nil
}

func (h hostSide) start(argv []string, timeout time.Duration) (job, error) {
	return hostJob{guestrpc.Start(argv, h.env, timeout)}, nil
}

func (h hostSide) listening(j job, port int, timeout time.Duration) (bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := guestrpc.TCPListening(port)
		if err != nil || ok || time.Now().After(deadline) || j.(hostJob).p.Exited() {
			return ok, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gorxeEndpoint runs gorxe's tools on the host, bound to the bridge.
type gorxeEndpoint struct {
	hostSide
	bin string
	dev []string // the options that select the device
}

func (e *gorxeEndpoint) name() string { return "gorxe" }

func (e *gorxeEndpoint) argv(t tool, opts []string) ([]string, error) {
	return append(append([]string{e.bin, t.gorxe}, e.dev...), opts...), nil
}

func (e *gorxeEndpoint) cmArgv(t tool, opts []string) []string {
	return append([]string{e.bin, t.gorxe}, opts...)
}

// cmListening waits for the line gorxe's server prints once it listens: until then its device
// may already answer on QP1 and would reject a client's REQ for want of a listener.
func (e *gorxeEndpoint) cmListening(j job, t tool, _ int, timeout time.Duration) (bool, error) {
	p := j.(hostJob).p
	deadline := time.Now().Add(timeout)
	for {
		if strings.Contains(p.Output(), t.cm.gorxeListening) {
			return true, nil
		}
		if p.Exited() || time.Now().After(deadline) {
			return false, fmt.Errorf("no %q line from the server", t.cm.gorxeListening)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type hostJob struct{ p *guestrpc.Process }

func (j hostJob) kill() { j.p.Kill() }

func (j hostJob) wait(d time.Duration) (guestrpc.Result, bool) { return j.p.WaitTimeout(d) }
