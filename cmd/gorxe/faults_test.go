package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultsCapture is a capture gorxe wrote under fault injection (see the capture package's
// tests): 69 frames, 8 of them dropped by the faults, 4 corrupted, 2 copies they added.
const faultsCapture = "../../capture/testdata/demo-faults.pcapng.gz"

// TestInjectedLossesShow: what a user sees of the packets fault injection dropped: dump marks
// each, in every format, and trace counts every one as a loss.
func TestInjectedLossesShow(t *testing.T) {
	code, out, errOut := run("dump", faultsCapture)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, 8, strings.Count(out, " icrc=ok [dropped by fault injector]\n"))
	assert.Equal(t, 4, strings.Count(out, " icrc=BAD [corrupted by fault injector]\n"))
	assert.Equal(t, 2, strings.Count(out, " [duplicated by fault injector]\n"))

	_, out, _ = run("dump", faultsCapture, "-json")
	assert.Equal(t, 8, strings.Count(out, `"fault":["dropped"]`))
	_, out, _ = run("dump", faultsCapture, "-v")
	assert.Equal(t, 8, strings.Count(out, "\n    dropped                yes                  never reached the network"))

	svg := filepath.Join(t.TempDir(), "faults.svg")
	code, _, errOut = run("trace", faultsCapture, "-o", svg)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "gorxe trace: wrote "+svg+": 69 packets, 6 endpoints: 31 retransmissions, 3 duplicates, 8 losses, 2 NAKs, 0 RNR NAKs\n", errOut)
}
