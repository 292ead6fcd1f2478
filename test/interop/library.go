package main

import (
	"errors"
	"path/filepath"
	"time"

	"github.com/gorxe/gorxe/internal/devselect"
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

// errNoLibCMServer is why the matrix runs no RDMA-CM server on the library.
var errNoLibCMServer = errors.New("a C RDMA-CM server on gorxe's library cannot be awaited: it prints nothing " +
	"when it listens, and no kernel list of CM IDs shows it")

func (e *libEndpoint) cmListening(job, tool, int, time.Duration) (bool, error) {
	return false, errNoLibCMServer
}
