package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersionLine(t *testing.T) {
	platform := " " + runtime.GOOS + "/" + runtime.GOARCH
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "4e873e0c1d2e9a8b7c6d5e4f3a2b1c0d9e8f7a6b"}, {Key: "vcs.modified", Value: "true"}}
	tests := []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		ok      bool
		want    string
	}{
		{"go install of a release", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.1"}}, true,
			"gorxe v0.3.1 go1.26.8" + platform},
		{"go build in a checkout", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.2-0.20261126052200-4e873e0c1d2e+dirty"}, Settings: vcs}, true,
			"gorxe v0.3.2-0.20261126052200-4e873e0c1d2e+dirty go1.26.8" + platform},
		{"make build", "v0.3.1-4-g4e873e0-dirty", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs}, true,
			"gorxe v0.3.1-4-g4e873e0-dirty go1.26.8" + platform},
		{"nothing stamped", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs}, true,
			"gorxe devel 4e873e0c1d2e+modified go1.26.8" + platform},
		{"clean checkout", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "4e873e0"}, {Key: "vcs.modified", Value: "false"}}}, true,
			"gorxe devel 4e873e0 go1.26.8" + platform},
		{"no build information", "", nil, false, "gorxe devel " + runtime.Version() + platform},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, versionLine(tt.stamped, tt.bi, tt.ok))
		})
	}
}

func TestVersionCommand(t *testing.T) {
	code, out, errOut := run("version")
	require.Equal(t, exitOK, code)
	assert.Empty(t, errOut)
	assert.Regexp(t, `^gorxe \S+( \S+)? go\S+ \S+/\S+\n$`, out)

	code, _, errOut = run("version", "x")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "gorxe version: unexpected argument \"x\"\n\nUsage: gorxe version (or gorxe --version)\n", errOut)

	_, flagOut, _ := run("--version")
	assert.Equal(t, out, flagOut, "gorxe --version is gorxe version")
}

// TestHelpListsEnvironment: every variable a command reads is documented in gorxe -h.
func TestHelpListsEnvironment(t *testing.T) {
	code, out, _ := run("-h")
	require.Equal(t, exitOK, code)
	_, env, found := strings.Cut(out, "\nEnvironment:\n\n")
	require.True(t, found, out)
	var names []string
	for _, l := range strings.Split(strings.TrimSuffix(env, "\n"), "\n") {
		names = append(names, strings.Fields(l)[0])
		assert.LessOrEqual(t, len(l), 100, "help line too long: %q", l)
	}
	assert.Equal(t, []string{"GORXE_ADDR", "GORXE_PORT", "GORXE_FAULTS", "GORXE_PCAP", "GORXE_LIB"}, names)
	assert.Contains(t, out, "gorxe version")
}
