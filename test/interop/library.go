package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/gorxe/gorxe/internal/devselect"
	"github.com/gorxe/gorxe/test/interop/guestrpc"
)

// buildLibrary builds gorxe's drop-in libibverbs.so.1 (and librdmacm.so.1, a symlink to it) into
// cache/clib with the Makefile's clib target, and returns that directory.
func buildLibrary(repo, cache string) (string, error) {
	dir := filepath.Join(cache, "clib")
	if _, err := runIn(repo, nil, "make", "-s", "clib", "CLIB_OUT="+dir); err != nil {
		return "", errors.New("building gorxe's C library (make clib; it needs cgo, a C compiler and " +
			"rdma-core's headers from libibverbs-dev and librdmacm-dev): " + err.Error())
	}
	return dir, nil
}

// libEndpoint runs the distribution's C tools on the host, unmodified, on gorxe's C library in
// place of libibverbs and librdmacm, with the library's device bound to the bridge.
type libEndpoint struct {
	hostSide
}

// newLibEndpoint is the endpoint of the library in dir, whose one device is the bridge's.
func newLibEndpoint(dir string) *libEndpoint {
	return &libEndpoint{hostSide{env: []string{"LD_LIBRARY_PATH=" + dir, devselect.EnvAddr + "=" + bridgeName}}}
}

func (e *libEndpoint) name() string { return "clib" }

// argv names the device and port as on rxe: the library lists the device GORXE_ADDR selects
// under gorxe's name for the interface.
func (e *libEndpoint) argv(t tool, opts []string) ([]string, error) {
	dev := []string{"-d", devselect.DeviceNamePrefix + bridgeName, "-i", "1"}
	return append(append([]string{t.c}, dev...), opts...), nil
}

func (e *libEndpoint) cmArgv(t tool, opts []string) []string {
	return append([]string{t.c}, opts...)
}

// cmListening waits until the server j has bound RoCE's UDP port. A C RDMA-CM server shows no
// other sign: rping prints nothing before a client connects, perftest's "Waiting for client" line
// stays in stdio's buffer on a pipe, and no kernel lists the library's CM IDs. The library binds
// its device's port in rdma_listen (or when the program creates its first verbs object), just
// before it registers the listener, and a client that starts and resolves in the VM comes far
// later than that.
func (e *libEndpoint) cmListening(j job, t tool, _ int, timeout time.Duration) (bool, error) {
	p := j.(hostJob).p
	deadline := time.Now().Add(timeout)
	for {
		ok, err := guestrpc.UDPBound(p.Pid(), roceUDP)
		if ok {
			return true, nil
		}
		if p.Exited() || time.Now().After(deadline) {
			return false, fmt.Errorf("%s never bound UDP %d (%v)", t.c, roceUDP, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
