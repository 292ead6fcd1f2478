package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gorxe/gorxe/test/interop/guestrpc"
)

// firstPort is the out-of-band TCP port of the first run; each run takes the next one, so no run
// meets the previous run's sockets in TIME_WAIT.
const firstPort = 18515

// serverListenTimeout bounds the wait for a server tool to open its TCP port.
const serverListenTimeout = 30 * time.Second

type suite struct {
	log    *logger
	o      *options
	k      kernel
	filter *regexp.Regexp
	port   int
	rows   []row
	vms    []*vm
	netMTU int
	// endpoints are the VM endpoints in use, repointed when their VM is rebooted.
	endpoints []*rxeEndpoint
	reboots   int
	// libFailReported is set once a row carries why gorxe's C library was not built.
	libFailReported bool
}

// inner runs inside the namespace: network, VMs, the control run, the gorxe matrix, the report.
func inner(log *logger, o *options) int {
	s := &suite{log: log, o: o, port: firstPort,
		k: kernel{Root: o.kernelRoot, Release: o.kernelRelease,
			Image: filepath.Join(o.kernelRoot, "boot", "vmlinuz-"+o.kernelRelease)}}
	if o.run != "" {
		re, err := regexp.Compile(o.run)
		if err != nil {
			fmt.Fprintf(os.Stderr, "interop: FAIL: -run: %v\n", err)
			return 1
		}
		s.filter = re
	}
	began := time.Now()
	err := s.execute()
	for _, v := range s.vms {
		if v != nil {
			v.shutdown()
		}
	}
	if err != nil {
		s.rows = append(s.rows, row{tool: "suite", role: "-", options: "setup", detail: err.Error()})
	}
	passed, failed := printTable(os.Stdout, s.rows)
	fmt.Printf("\ninterop: VMs, control run and matrix took %.0fs\n", time.Since(began).Seconds())
	fmt.Printf("interop: %d passed, %d failed\n", passed, failed)
	if failed > 0 || passed == 0 {
		return 1
	}
	return 0
}

func (s *suite) execute() error {
	vmCount := 1
	if s.o.baseline != "none" {
		vmCount = 2
	}
	if err := setupBridge(2); err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	s.netMTU = 1500
	if err := setHostMTU(2, s.netMTU); err != nil {
		return err
	}
	s.vms = make([]*vm, vmCount)
	errs := make([]error, vmCount)
	var wg sync.WaitGroup
	for i := range vmCount {
		wg.Go(func() { s.vms[i], errs[i] = bootVM(s.log, i+1, s.k, s.o.initrd, s.o.workdir, s.netMTU) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for _, v := range s.vms {
		s.rows = append(s.rows, row{tool: "boot", role: fmt.Sprintf("vm%d", v.n), options: "kernel " + s.k.Release,
			pass: true, seconds: v.bootTime.Seconds()})
	}

	if s.o.baseline != "none" {
		srv := &rxeEndpoint{v: s.vms[0]}
		cli := &rxeEndpoint{v: s.vms[1]}
		s.endpoints = []*rxeEndpoint{srv, cli}
		for _, p := range baselineMatrix(s.o.baseline == "full") {
			if err := s.enterPhase(p); err != nil {
				return err
			}
			for _, rc := range p.cases {
				s.run(p, rc, cli, srv, "rxe->rxe")
			}
		}
		s.vms[1].shutdown()
		s.vms = s.vms[:1]
	}
	if s.o.gorxeOnly {
		return nil
	}
	rxe := &rxeEndpoint{v: s.vms[0]}
	s.endpoints = []*rxeEndpoint{rxe}
	gx := &gorxeEndpoint{bin: s.o.gorxeBin, dev: strings.Fields(s.o.gorxeDev)}
	lib := newLibEndpoint(s.o.libDir)
	for _, p := range gorxeMatrix() {
		if err := s.enterPhase(p); err != nil {
			return err
		}
		s.devinfo(rxe, gx, lib, p)
		for _, rc := range p.cases {
			var host endpoint = gx
			if rc.onLibrary {
				host = lib
			}
			s.run(p, rc, host, rxe, host.name()+"->rxe")
			s.run(p, rc, rxe, host, "rxe->"+host.name())
		}
	}
	return nil
}

// enterPhase sets the MTU of every link and clears the loss rule (a lossy phase sets it per run,
// as the tool needs).
func (s *suite) enterPhase(p phase) error {
	s.log.printf("phase %s", p.label)
	if p.netMTU != s.netMTU {
		if err := setHostMTU(2, p.netMTU); err != nil {
			return err
		}
		for _, v := range s.vms {
			r, err := v.run([]string{"ip", "link", "set", "eth0", "mtu", fmt.Sprint(p.netMTU)}, 20*time.Second)
			if err != nil || r.ExitCode != 0 {
				return fmt.Errorf("VM %d: setting MTU %d: %v %s", v.n, p.netMTU, err, r.Output)
			}
		}
		s.netMTU = p.netMTU
	}
	return setLoss(lossOff)
}

// maxReboots bounds how often a VM that died or stopped answering is booted again.
const maxReboots = 3

// ensureVMs checks that every VM answers; one that does not is recorded as a failure with its
// console, killed and booted again into the phase's MTU, so one wedged kernel cannot stall or
// fail the rest of the matrix.
func (s *suite) ensureVMs(p phase) error {
	for i, v := range s.vms {
		if v.alive() {
			continue
		}
		s.rows = append(s.rows, row{tool: "vm", role: fmt.Sprintf("vm%d", v.n), options: "died or stopped answering",
			detail: "console:\n" + v.consoleTail()})
		v.kill()
		if s.reboots >= maxReboots {
			return fmt.Errorf("VM %d is down and has been rebooted %d times already", v.n, s.reboots)
		}
		s.reboots++
		nv, err := bootVM(s.log, v.n, s.k, s.o.initrd, s.o.workdir, s.netMTU)
		if err != nil {
			return err
		}
		s.vms[i] = nv
		for _, e := range s.endpoints {
			if e.v == v {
				e.v, e.gids = nv, nil
			}
		}
	}
	return nil
}

// devinfo checks that every device shows an active port with the phase's MTU: rxe's, gorxe's
// through its Go tool and through the distribution's ibv_devinfo on gorxe's C library.
func (s *suite) devinfo(rxe *rxeEndpoint, gx *gorxeEndpoint, lib *libEndpoint, p phase) {
	want := "1024"
	if p.netMTU >= 9000 {
		want = "4096"
	}
	check := func(tool, role string, r guestrpc.Result, err error) {
		rw := row{tool: tool, role: role, options: "active_mtu " + want, seconds: r.Seconds}
		switch {
		case err != nil:
			rw.detail = err.Error()
		case r.ExitCode != 0 || r.Error != "":
			rw.detail = fmt.Sprintf("exit %d %s\n%s", r.ExitCode, r.Error, tail(r.Output, 4000))
		case !strings.Contains(r.Output, "PORT_ACTIVE"):
			rw.detail = "no PORT_ACTIVE port:\n" + r.Output
		case !regexp.MustCompile(`active_mtu:\s*` + want).MatchString(r.Output):
			rw.detail = "active_mtu is not " + want + ":\n" + r.Output
		default:
			rw.pass = true
		}
		s.rows = append(s.rows, rw)
	}
	if !s.skip("ibv_devinfo rxe " + p.label) {
		r, err := rxe.v.run([]string{"ibv_devinfo", "-d", "rxe0"}, 30*time.Second)
		check("ibv_devinfo", "rxe", r, err)
		argv := append([]string{gx.bin, "devinfo"}, gx.dev...)
		check("gorxe devinfo", "gorxe", guestrpc.Start(argv, nil, 30*time.Second).Wait(), nil)
	}
	if !s.skip("ibv_devinfo clib "+p.label) && s.libraryBuilt("ibv_devinfo", "clib", "active_mtu "+want) {
		argv, _ := lib.argv(tool{c: "ibv_devinfo"}, nil)
		check("ibv_devinfo", "clib", guestrpc.Start(argv, lib.env, 30*time.Second).Wait(), nil)
	}
}

// libraryBuilt says whether gorxe's C library was built; if not, it records the case named by
// tool, role and options as failed for that reason (the build's output goes with the first), so
// that a missing compiler or header fails the suite rather than thinning the matrix.
func (s *suite) libraryBuilt(tool, role, options string) bool {
	if s.o.libErr == "" {
		return true
	}
	detail := "not run: gorxe's C library was not built (the first clib row says why)"
	if !s.libFailReported {
		detail, s.libFailReported = s.o.libErr, true
	}
	s.rows = append(s.rows, row{tool: tool, role: role, options: options, detail: detail})
	return false
}

func (s *suite) skip(name string) bool {
	return s.filter != nil && !s.filter.MatchString(name)
}

// describe is the options column: GID family, path MTU, loss and the tool options.
func describe(p phase, rc runCase) string {
	d := fmt.Sprintf("%s mtu%d", familyName(rc.family), rc.pathMTU)
	if rc.tool.cm != nil { // the CM negotiates the path MTU from the ports'
		d = familyName(rc.family)
	}
	if p.loss {
		d += " " + lossFor(rc).String()
	}
	d += " " + strings.Join(rc.opts, " ")
	if len(rc.gorxeOpts) > 0 {
		d += " (gorxe: " + strings.Join(rc.gorxeOpts, " ") + ")"
	}
	return d
}

// sideOpts are the options side e passes: the common ones, plus gorxe's own on gorxe.
func sideOpts(e endpoint, rc runCase, gid, port int) []string {
	o := commonOpts(rc, gid, port)
	if e.name() == "gorxe" {
		o = append(o, rc.gorxeOpts...)
		if rc.tool.perftest {
			o = append(o, diagnosticOpts...)
		}
	}
	return o
}

// diagnosticOpts make gorxe's perftest tools say what their device saw: its events (retransmit
// timeouts, NAKs, gaps; rate-limited per QP) and, at the end, its counters, errors or not. Only a
// failing case's output is shown, so a rare failure brings its own evidence; they are left out
// of the case's name.
var diagnosticOpts = []string{"--log-level=debug", "--counters"}

// commonOpts are the options both sides pass, with the side's own GID index.
func commonOpts(rc runCase, gid, port int) []string {
	gidFlag := "-g"
	if rc.tool.perftest {
		gidFlag = "-x"
	}
	o := []string{gidFlag, fmt.Sprint(gid), "-p", fmt.Sprint(port)}
	// UD's message size is its MTU and ibv_ud_pingpong has no -m; RDMA-CM negotiates the path MTU.
	if rc.tool != udPingpong && rc.tool.cm == nil {
		o = append(o, "-m", fmt.Sprint(rc.pathMTU))
	}
	if rc.tool.perftest {
		o = append(o, "-F") // no CPU frequency warnings: the VM's clock is emulated
	}
	return append(o, rc.opts...)
}

// toolArgvs are the command lines of a tool that takes device options: the server's, and the
// client's with the server's address last. That address is IPv4, where the out-of-band TCP
// connection goes, unless the tool connects through RDMA-CM (perftest's -R), which needs the
// server's address of the case's family.
func toolArgvs(rc runCase, cli, srv endpoint, sGID, cGID, port int) (sArgv, cArgv []string) {
	family := 4
	if rc.tool.cm != nil {
		family = rc.family
	}
	sArgv, _ = srv.argv(rc.tool, sideOpts(srv, rc, sGID, port))
	cArgv, _ = cli.argv(rc.tool, append(sideOpts(cli, rc, cGID, port), srv.addr(family).String()))
	return sArgv, cArgv
}

// cmArgvs are an RDMA-CM tool's command lines: the server listens on its address of the case's
// family and the client connects to it, both on port; the case's options go to both, and gorxe's
// server gets what makes it say it listens.
func cmArgvs(rc runCase, cli, srv endpoint, port int) (sArgv, cArgv []string) {
	if rc.tool.c == mckey.c {
		return mckeyArgvs(rc, cli, srv)
	}
	cm := rc.tool.cm
	opts := func(e endpoint, role string, addr bool) []string {
		o := strings.Fields(role)
		if addr {
			o = append(o, srv.addr(rc.family).String())
		}
		if cm.port == 0 {
			o = append(o, "-p", fmt.Sprint(port))
		}
		o = append(o, rc.opts...)
		if e.name() == "gorxe" {
			o = append(o, rc.gorxeOpts...)
		}
		return o
	}
	so := opts(srv, cm.server, !cm.anyAddr)
	if srv.name() == "gorxe" {
		if cm.anyAddr {
			so = append(so, "--bind", srv.addr(rc.family).String())
		}
		so = append(so, cm.gorxeServerOpts...)
	}
	return srv.cmArgv(rc.tool, so), cli.cmArgv(cm.clientTool(rc.tool), opts(cli, cm.client, true))
}

// endServer collects the server's result once its client has ended (clientPassed if it exited 0).
// A server whose client passed should end at once, or, if it serves until stopped, still be
// running a second later (long enough for it to tear down what the client left, and for a VM
// job's end to be reported), and is then stopped (stopped); one whose client failed is stopped
// after a short grace.
func endServer(rc runCase, sj job, clientPassed bool, fail func(string, ...any)) (r guestrpc.Result, stopped bool) {
	serves := rc.tool.cm != nil && rc.tool.cm.serves
	grace := 20 * time.Second
	switch {
	case !clientPassed:
		grace = 3 * time.Second
	case serves:
		grace = time.Second
	}
	r, done := sj.wait(grace)
	if done {
		if serves && clientPassed {
			fail("the server ended before it was stopped")
		}
		return r, false
	}
	if clientPassed && !serves {
		fail("server did not exit within %v of the client", grace)
	}
	sj.kill()
	r, _ = sj.wait(10 * time.Second)
	return r, clientPassed && serves
}

// run runs one case -count times with cli as client and srv as server.
func (s *suite) run(p phase, rc runCase, cli, srv endpoint, role string) {
	opts := describe(p, rc)
	if s.skip(rc.tool.c + " " + role + " " + opts) {
		return
	}
	if rc.onLibrary && !s.libraryBuilt(rc.tool.c, role, opts) {
		return
	}
	for range max(s.o.count, 1) {
		early := 0
		for {
			rw, refused := s.runOnce(p, rc, cli, srv, role, opts)
			if refused && early+1 < maxEarlyConnects {
				early++
				s.log.printf("%s %s %s: perftest's client connected before its server listened (%.1fs); again", rw.tool, role, opts, rw.seconds)
				continue
			}
			if early > 0 {
				rw.capture += fmt.Sprintf(", after %d early connects", early)
			}
			verdict := "PASS"
			if !rw.pass {
				verdict = "FAIL"
			}
			s.log.printf("%s %s %s: %s in %.1fs %s", rw.tool, role, opts, verdict, rw.seconds, rw.capture)
			s.rows = append(s.rows, rw)
			break
		}
	}
}

// maxEarlyConnects bounds the runs of a perftest -R case whose client connected before its kernel
// server listened. The server listens for the test's QPs only after the exchange that precedes
// them, so a fast client's REQ or SIDR_REQ may find no listener (REJ reason 8, SIDR_REP status 1,
// the answer the IBTA gives). perftest's client then retries, but Debian 12's perftest
// (4.5-0.17) retries on the IDs and event channel it has just destroyed, which fails with EINVAL
// on any librdmacm; later perftest allocates new ones. A client on gorxe's C library gets there
// first in about one run in five against a VM; a run that failed any other way is not rerun.
const maxEarlyConnects = 8

// connectedEarly reports whether a failed run of tool t against a server of kind server is
// perftest's early connect (maxEarlyConnects): a perftest -R client that failed while the kernel
// server refused refusals of its connections for want of a listener.
func connectedEarly(t tool, server string, clientExit, refusals int) bool {
	return t.cm == perftestCM && server == "rxe" && clientExit != 0 && refusals > 0
}

// runOnce runs one case, captured on VM 1's tap. refused reports a failed perftest -R run whose
// kernel server refused a connection for want of a listener (maxEarlyConnects).
func (s *suite) runOnce(p phase, rc runCase, cli, srv endpoint, role, opts string) (rw row, refused bool) {
	if err := s.ensureVMs(p); err != nil {
		return row{tool: rc.tool.c, role: role, options: opts, detail: err.Error()}, false
	}
	s.port++
	port := s.port
	rw = row{tool: rc.tool.c, role: role, options: opts}
	began := time.Now()
	defer func() { rw.seconds = time.Since(began).Seconds() }()
	fail := func(format string, args ...any) { rw.detail += fmt.Sprintf(format, args...) + "\n" }

	sGID, err := srv.gidIndex(rc.family)
	if err != nil {
		fail("server GID: %v", err)
		return
	}
	cGID, err := cli.gidIndex(rc.family)
	if err != nil {
		fail("client GID: %v", err)
		return
	}
	var sArgv, cArgv []string
	if rc.tool.cm != nil && !rc.tool.perftest {
		sArgv, cArgv = cmArgvs(rc, cli, srv, port)
	} else {
		sArgv, cArgv = toolArgvs(rc, cli, srv, sGID, cGID, port)
	}

	pcap := filepath.Join(s.o.workdir, fmt.Sprintf("run%05d-%s.pcap", port, rc.tool.c))
	capt, err := startCapture(tapName(1), pcap)
	if err != nil {
		fail("capture: %v", err)
		return
	}
	if p.loss {
		if err := setLoss(lossFor(rc)); err != nil {
			capt.stop()
			fail("loss rule: %v", err)
			return
		}
	}
	drops := lossDrops()
	hostDropsBefore := hostRxDrops(tapName(1))
	watched := s.vms[0]
	before, err := watched.rxeCounters()
	if err != nil {
		capt.stop()
		fail("reading rxe counters: %v", err)
		return
	}

	sj, err := srv.start(sArgv, rc.timeout)
	if err != nil {
		capt.stop()
		fail("starting server %q: %v", strings.Join(sArgv, " "), err)
		return
	}
	var cres guestrpc.Result
	clientRan := false
	listening := srv.listening
	if rc.tool.cm != nil {
		listening = func(j job, port int, d time.Duration) (bool, error) {
			return srv.cmListening(j, rc.tool, rc.tool.cm.listenPort(port), d)
		}
	}
	if ok, err := listening(sj, port, serverListenTimeout); !ok {
		fail("server never listened on port %d (%v)", port, err)
		sj.kill()
	} else if cj, err := cli.start(cArgv, rc.timeout); err != nil {
		fail("starting client: %v", err)
		sj.kill()
	} else {
		clientRan = true
		var done bool
		if cres, done = cj.wait(rc.timeout + 30*time.Second); !done {
			cj.kill()
			cres, _ = cj.wait(10 * time.Second)
			fail("client did not end")
		}
	}
	sres, serverStopped := endServer(rc, sj, clientRan && cres.ExitCode == 0, fail)
	// The counters are read while the capture still runs, so that every packet they count was
	// sent before the capture stopped.
	after, err := watched.rxeCounters()
	if err != nil {
		fail("reading rxe counters: %v", err)
	}
	delta := after.minus(before)
	capt.stop()
	if n := capt.dropped(); n != 0 {
		fail("the capture missed %d packets (tcpdump: %q), so not every ICRC was checked", n, strings.TrimSpace(capt.stderr.String()))
	}
	if p.loss {
		rw.options += fmt.Sprintf(" (%d dropped)", lossDrops()-drops)
	}
	cc, ccErr := verifyCapture(s.o.gorxeBin, pcap)
	if ccErr != nil {
		fail("capture check: %v", ccErr)
	} else {
		rw.capture = fmt.Sprintf("%s, rxe sent %d", cc.summary(), delta["sent_pkts"])
		if prob := cc.problem(capturePeers(rc, cli, srv)...); prob != "" {
			fail("capture %s: %s", pcap, prob)
		}
		for _, e := range []endpoint{srv, cli} {
			st := cc.Reads[e.addr(rc.family).String()]
			if st == nil {
				continue
			}
			rw.capture += fmt.Sprintf(", %s READ responses %s", e.name(), st)
			if e.name() != "rxe" && !p.loss && st.ratio() > maxReadResend {
				fail("%s sent %.2fx the READ response packets the READs needed (at most %.2fx): it outran the requester, which dropped them and asked again",
					e.name(), st.ratio(), maxReadResend)
			}
		}
		// Cross-check the capture against the kernel's own count: every packet rxe sent passes
		// its tap, so the capture must hold at least as many from it, short of what the host
		// dropped on the way in before the capture point (counted, and recovered by the peer).
		got, sent := cc.BySrc[watched.addr(rc.family).String()], delta["sent_pkts"]
		hostDrops := hostRxDrops(tapName(1)) - hostDropsBefore
		switch {
		case int64(got) >= sent:
		case hostDropsBefore >= 0 && sent-int64(got) <= hostDrops:
			rw.capture += fmt.Sprintf(", host dropped %d on arrival", hostDrops)
		default:
			fail("the capture holds %d packets from VM %d but its rxe sent %d (host dropped %d on arrival)", got, watched.n, sent, hostDrops)
		}
	}
	for _, side := range []struct {
		what string
		argv []string
		r    guestrpc.Result
		ran  bool
		// exited is set for a side that ended by itself, whose exit status counts.
		exited bool
	}{{"server " + srv.name(), sArgv, sres, true, !serverStopped}, {"client " + cli.name(), cArgv, cres, clientRan, clientRan}} {
		if !side.ran {
			continue
		}
		if side.exited && (side.r.ExitCode != 0 || side.r.TimedOut || side.r.Error != "") {
			fail("%s exited %d (timed out: %v) %s", side.what, side.r.ExitCode, side.r.TimedOut, side.r.Error)
		}
		if cm := rc.tool.cm; cm != nil && cm.failed != nil {
			if m := cm.failed.FindString(side.r.Output); m != "" {
				fail("%s reported a failed connection (%q)", side.what, m)
			}
		}
	}
	if clientRan && rc.clientSays != "" && !strings.Contains(cres.Output, rc.clientSays) {
		fail("the client never printed %q", rc.clientSays)
	}
	rw.pass = rw.detail == ""
	refused = !rw.pass && ccErr == nil && clientRan &&
		connectedEarly(rc.tool, srv.name(), cres.ExitCode, cc.Refusals[srv.addr(rc.family).String()])
	if !rw.pass {
		rw.detail += fmt.Sprintf("--- server: %s\n%s\n--- client: %s\n%s", strings.Join(sArgv, " "), tail(sres.Output, 6000),
			strings.Join(cArgv, " "), tail(cres.Output, 6000))
		rw.detail += fmt.Sprintf("\n--- rxe counters of VM %d during the run: %s", watched.n, delta)
		rw.detail += fmt.Sprintf("\n--- capture kept: %s", pcap)
	} else if !s.o.keep {
		os.Remove(pcap)
	}
	return rw, refused
}
