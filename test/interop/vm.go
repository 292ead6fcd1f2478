package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gorxe/gorxe/test/interop/guestrpc"
)

// bootTimeout bounds a VM's boot to a ready agent; emulation boots in seconds, so this is generous.
const bootTimeout = 120 * time.Second

// vm is one qemu guest running kernel rxe (device rxe0 on eth0) and the agent.
type vm struct {
	n        int
	ip4, ip6 netip.Prefix
	mtu      int
	console  string // the serial console log
	cmd      *exec.Cmd
	exited   chan struct{}
	client   http.Client
	bootTime time.Duration
}

// bootVM starts VM n on tap n and waits until its agent answers.
func bootVM(log *logger, n int, k kernel, initrd, workdir string, mtu int) (*vm, error) {
	ip4, ip6 := guestAddrs(n)
	v := &vm{n: n, ip4: ip4, ip6: ip6, mtu: mtu, exited: make(chan struct{}),
		console: filepath.Join(workdir, fmt.Sprintf("vm%d-console.log", n))}
	appendArgs := fmt.Sprintf("console=ttyS0 quiet panic=-1 gorxe.ip4=%s gorxe.ip6=%s gorxe.mtu=%d", ip4, ip6, mtu)
	v.cmd = exec.Command("qemu-system-x86_64",
		"-accel", "tcg,thread=multi", "-cpu", "max", "-m", "768", "-smp", "2",
		"-kernel", k.Image, "-initrd", initrd, "-append", appendArgs,
		"-display", "none", "-monitor", "none", "-serial", "file:"+v.console,
		"-no-reboot", "-nodefaults",
		"-netdev", fmt.Sprintf("tap,id=n0,ifname=%s,script=no,downscript=no", tapName(n)),
		"-device", fmt.Sprintf("virtio-net-pci,netdev=n0,mac=%s", fmt.Sprintf(guestMAC, n)))
	qlog, err := os.Create(filepath.Join(workdir, fmt.Sprintf("vm%d-qemu.log", n)))
	if err != nil {
		return nil, err
	}
	v.cmd.Stdout, v.cmd.Stderr = qlog, qlog
	began := time.Now()
	if err := v.cmd.Start(); err != nil {
		qlog.Close()
		return nil, fmt.Errorf("starting qemu: %w", err)
	}
	go func() {
		v.cmd.Wait()
		qlog.Close()
		close(v.exited)
	}()
	v.client.Timeout = 0
	deadline := time.Now().Add(bootTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := v.post(ctx, guestrpc.PathListening, guestrpc.ListeningRequest{Port: guestrpc.Port}, nil)
		cancel()
		if err == nil {
			break
		}
		select {
		case <-v.exited:
			return nil, fmt.Errorf("VM %d exited during boot:\n%s", n, v.consoleTail())
		default:
		}
		if c := v.consoleText(); strings.Contains(c, "GORXE-INIT-FAILED") {
			v.kill()
			return nil, fmt.Errorf("VM %d failed to set up rxe:\n%s", n, v.consoleTail())
		}
		if time.Now().After(deadline) {
			v.kill()
			return nil, fmt.Errorf("VM %d: agent not reachable at %v within %v:\n%s", n, ip4.Addr(), bootTimeout, v.consoleTail())
		}
		time.Sleep(250 * time.Millisecond)
	}
	v.bootTime = time.Since(began)
	log.printf("VM %d up at %v in %.1fs", n, ip4.Addr(), v.bootTime.Seconds())
	return v, nil
}

func (v *vm) consoleText() string {
	b, _ := os.ReadFile(v.console)
	return string(b)
}

// consoleTail is the end of the serial console, for error messages.
func (v *vm) consoleTail() string {
	c := v.consoleText()
	if len(c) > 3000 {
		c = c[len(c)-3000:]
	}
	return c
}

// post sends one agent request and decodes its answer into resp (when not nil).
func (v *vm) post(ctx context.Context, path string, req, resp any) (*http.Response, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	url := fmt.Sprintf("http://%s%s", netip.AddrPortFrom(v.ip4.Addr(), guestrpc.Port), path)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r, err := v.client.Do(hreq)
	if err != nil {
		return nil, err
	}
	defer r.Body.Close()
	data, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusOK {
		return r, fmt.Errorf("agent %s: %s: %s", path, r.Status, strings.TrimSpace(string(data)))
	}
	if resp != nil {
		if err := json.Unmarshal(data, resp); err != nil {
			return r, fmt.Errorf("agent %s: %w", path, err)
		}
	}
	return r, nil
}

// call is post with a deadline well past timeout, so a dead VM cannot hang the suite.
func (v *vm) call(path string, timeout time.Duration, req, resp any) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	_, err := v.post(ctx, path, req, resp)
	return err
}

// start launches argv in the guest.
func (v *vm) start(argv []string, timeout time.Duration) (int, error) {
	var resp guestrpc.StartResponse
	err := v.call(guestrpc.PathStart, 0, guestrpc.StartRequest{Argv: argv, TimeoutSec: timeout.Seconds()}, &resp)
	return resp.ID, err
}

// wait collects a started command's result; timeout is the one it was started with.
func (v *vm) wait(id int, timeout time.Duration) (guestrpc.Result, error) {
	var r guestrpc.Result
	err := v.call(guestrpc.PathWait, timeout, guestrpc.WaitRequest{ID: id}, &r)
	return r, err
}

// run starts argv and waits for it.
func (v *vm) run(argv []string, timeout time.Duration) (guestrpc.Result, error) {
	id, err := v.start(argv, timeout)
	if err != nil {
		return guestrpc.Result{}, err
	}
	return v.wait(id, timeout)
}

// listening waits until a guest socket listens on TCP port.
func (v *vm) listening(port int, timeout time.Duration) (bool, error) {
	var r guestrpc.ListeningResponse
	err := v.call(guestrpc.PathListening, timeout, guestrpc.ListeningRequest{Port: port, TimeoutSec: timeout.Seconds()}, &r)
	return r.Listening, err
}

// shutdown powers the guest off, killing qemu if it does not stop within a few seconds.
func (v *vm) shutdown() {
	select {
	case <-v.exited:
		return
	default:
	}
	v.call(guestrpc.PathPoweroff, 0, struct{}{}, nil)
	select {
	case <-v.exited:
	case <-time.After(10 * time.Second):
		v.kill()
	}
}

func (v *vm) kill() {
	if v.cmd.Process != nil {
		v.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-v.exited
}

// alive reports whether qemu runs and the agent answers within a few seconds.
func (v *vm) alive() bool {
	select {
	case <-v.exited:
		return false
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := v.post(ctx, guestrpc.PathListening, guestrpc.ListeningRequest{Port: guestrpc.Port}, nil)
	return err == nil
}

// killJob kills a started command; its result is still collected with wait.
func (v *vm) killJob(id int) error {
	return v.call(guestrpc.PathKill, 0, guestrpc.WaitRequest{ID: id}, nil)
}
