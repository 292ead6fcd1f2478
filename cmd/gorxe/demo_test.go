package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDemoFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name      string
		args      []string
		stderrHas string
	}{
		{"ladder of unknown format", []string{"demo", "-trace", filepath.Join(dir, "x.txt")}, "gorxe demo: -trace: output name must end in .svg or .html\n"},
		{"walkthrough with faults", []string{"demo", "-walkthrough", dir, "-faults", "loss=0.1"}, "Usage: gorxe demo"},
		{"unknown flag", []string{"demo", "-nosuch"}, "gorxe demo: flag provided but not defined: -nosuch\n\nUsage: gorxe demo"},
		{"walkthrough with a capture", []string{"demo", "-walkthrough", dir, "-pcap", filepath.Join(dir, "x.pcapng")}, "Usage: gorxe demo"},
		{"walkthrough with metrics", []string{"demo", "-walkthrough", dir, "-counters"}, "Usage: gorxe demo"},
	} {
		code, out, errOut := run(tc.args...)
		assert.Equal(t, exitUsage, code, tc.name)
		assert.Empty(t, out, tc.name)
		assert.Contains(t, errOut, tc.stderrHas, tc.name)
	}
	_, err := os.Stat(filepath.Join(dir, "x.txt"))
	assert.True(t, os.IsNotExist(err), "a refused run creates no files")
}

// TestDemoWritesCaptureAndLadder: the capture gorxe demo writes is one gorxe dump reads with every
// ICRC verified, and the ladder is a page.
func TestDemoWritesCaptureAndLadder(t *testing.T) {
	dir := t.TempDir()
	pcap, page := filepath.Join(dir, "demo.pcapng"), filepath.Join(dir, "demo.html")
	code, out, errOut := run("demo", "-a", "127.30.6.1", "-b", "127.30.6.2", "-pcap", pcap, "-trace", page)
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	assert.Contains(t, out, "All 9 steps verified.")

	code, dumped, errOut := run("dump", pcap)
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(strings.TrimSpace(dumped), "\n")
	assert.Equal(t, strings.Count(out, " icrc=ok"), len(lines), "every narrated packet is in the capture")
	for _, l := range lines {
		assert.True(t, strings.HasSuffix(l, " icrc=ok"), l)
	}
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(html), "<html")
	assert.Contains(t, string(html), "RC_RDMA_READ_REQUEST")
}

// TestDemoCapturesWithEnv: GORXE_PCAP names the demo's capture when -pcap does not, as for every tool.
func TestDemoCapturesWithEnv(t *testing.T) {
	pcap := filepath.Join(t.TempDir(), "env.pcapng")
	t.Setenv("GORXE_PCAP", pcap)
	code, out, errOut := run("demo", "-a", "127.30.6.5", "-b", "127.30.6.6")
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	code, dumped, errOut := run("dump", pcap)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, strings.Count(out, " icrc=ok"), strings.Count(dumped, " icrc=ok"))
}
