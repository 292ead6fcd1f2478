package guestrpc

import (
	"net"
	"strings"
	"testing"
	"time"
)

func TestTCPListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if ok, err := TCPListening(port); err != nil || !ok {
		t.Fatalf("TCPListening(%d) = %v, %v while listening", port, ok, err)
	}
	ln.Close()
	if ok, err := TCPListening(port); err != nil || ok {
		t.Fatalf("TCPListening(%d) = %v, %v after close", port, ok, err)
	}
}

func TestStartCollectsOutputAndExitCode(t *testing.T) {
	r := Start([]string{"sh", "-c", "echo out; echo err >&2; exit 3"}, nil, 10*time.Second).Wait()
	if r.ExitCode != 3 || r.TimedOut || !strings.Contains(r.Output, "out") || !strings.Contains(r.Output, "err") {
		t.Errorf("result %+v", r)
	}
}

func TestStartKillsAtTimeout(t *testing.T) {
	r := Start([]string{"sleep", "30"}, nil, 100*time.Millisecond).Wait()
	if !r.TimedOut || r.ExitCode != -1 {
		t.Errorf("result %+v, want a timed-out kill", r)
	}
}

func TestStartMissingProgram(t *testing.T) {
	r := Start([]string{"/nonexistent/program"}, nil, time.Second).Wait()
	if r.ExitCode != -1 || r.Error == "" {
		t.Errorf("result %+v, want a start error", r)
	}
	if r := Start(nil, nil, time.Second).Wait(); r.Error == "" {
		t.Errorf("empty argv: %+v", r)
	}
}

func TestKillAndWaitTimeout(t *testing.T) {
	p := Start([]string{"sleep", "30"}, nil, time.Minute)
	if _, done := p.WaitTimeout(50 * time.Millisecond); done || p.Exited() {
		t.Fatal("sleep 30 ended early")
	}
	p.Kill()
	r := p.Wait()
	if r.TimedOut || r.ExitCode != -1 || !p.Exited() {
		t.Errorf("after Kill: %+v", r)
	}
}
