//go:build linux

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// machineInfo describes this machine: cores, CPU model, kernel, the Go that builds gorxe, and
// how busy the machine was when the run began.
func machineInfo(goBin string) Machine {
	m := Machine{
		Cores:     runtime.NumCPU(),
		CPU:       cpuModel(),
		Kernel:    kernelRelease(),
		GoVersion: runtime.Version(),
		Date:      time.Now().UTC().Format(time.RFC3339),
	}
	if out, err := exec.Command(goBin, "env", "GOVERSION").Output(); err == nil {
		if v := strings.TrimSpace(string(out)); v != "" {
			m.GoVersion = v
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.LoadAvg = strings.Join(f[:3], " ")
		}
	}
	return m
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return ""
}

func kernelRelease() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return "unknown"
	}
	b := make([]byte, 0, len(u.Release))
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(bytes.TrimSpace(b))
}
