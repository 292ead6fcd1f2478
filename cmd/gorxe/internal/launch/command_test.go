package launch

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cmd/gorxe/internal/getopt"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/tool"
)

// TestParseArgs: gorxe exec's options end at the program's name or at "--"; what follows is the
// program's command line, its own options included.
func TestParseArgs(t *testing.T) {
	tests := []struct {
		args []string
		want options
	}{
		{[]string{"ibv_devinfo"}, options{sysfs: "auto", argv: []string{"ibv_devinfo"}}},
		{[]string{"--addr", "127.0.0.2", "--", "ib_write_bw", "-d", "x"},
			options{addr: "127.0.0.2", sysfs: "auto", argv: []string{"ib_write_bw", "-d", "x"}}},
		{[]string{"--addr=eth0", "--lib=/opt/gorxe", "rping", "-s", "--addr", "x"},
			options{addr: "eth0", lib: "/opt/gorxe", sysfs: "auto", argv: []string{"rping", "-s", "--addr", "x"}}},
		{[]string{"--ad", "lo", "--", "--", "x"}, options{addr: "lo", sysfs: "auto", argv: []string{"--", "x"}}},
		{[]string{"--", "-h"}, options{sysfs: "auto", argv: []string{"-h"}}},
		{[]string{"ibv_devinfo", "-h"}, options{sysfs: "auto", argv: []string{"ibv_devinfo", "-h"}}},
		{[]string{"--sysfs=off", "x"}, options{sysfs: "off", argv: []string{"x"}}},
		{[]string{"--sysfs", "on", "x", "--sysfs=off"}, options{sysfs: "on", argv: []string{"x", "--sysfs=off"}}},
	}
	for _, tc := range tests {
		got, err := parseArgs(tc.args)
		require.NoError(t, err, "%q", tc.args)
		assert.Equal(t, tc.want, got, "%q", tc.args)
	}
}

func TestParseArgsErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{nil, "no program to run"},
		{[]string{"--addr", "lo"}, "no program to run"},
		{[]string{"--addr", "lo", "--"}, "no program to run"},
		{[]string{"--addr"}, "option '--addr' requires an argument"},
		{[]string{"--addr=", "x"}, "--addr : empty: give an interface name or an address"},
		{[]string{"--lib", "", "x"}, "--lib : empty: give a directory"},
		{[]string{"--sysfs=yes", "x"}, "--sysfs yes: give auto, on or off"},
		{[]string{"-d", "x", "prog"}, "invalid option -- 'd'"},
		{[]string{"--bind", "x", "prog"}, "unrecognized option '--bind'"},
	}
	for _, tc := range tests {
		_, err := parseArgs(tc.args)
		require.ErrorIs(t, err, getopt.ErrUsage, "%q", tc.args)
		assert.EqualError(t, err, tc.msg, "%q", tc.args)
	}
	for _, args := range [][]string{{"-h"}, {"--help", "x"}, {"--addr", "lo", "-h", "prog"}} {
		_, err := parseArgs(args)
		assert.ErrorIs(t, err, tool.ErrHelp, "%q", args)
	}
}

// TestCommandLine: help on standard output, a bad command line as the runner reports it (one
// line, the usage, status 2), and a failure before the program runs as one line with status 1.
func TestCommandLine(t *testing.T) {
	var help bytes.Buffer
	Usage(&help)
	empty := t.TempDir()
	tests := []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"help", []string{"-h"}, tool.ExitOK, help.String(), ""},
		{"no program", []string{"--addr", "lo"}, tool.ExitUsage, "", "gorxe exec: no program to run\n\n" + help.String()},
		{"no library", []string{"--lib", empty, "true"}, tool.ExitFailure, "",
			"gorxe exec: --lib " + empty + ": no libibverbs.so.1 there (make clib writes it to build/clib)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GORXE_ADDR", "")
			var stdout, stderr bytes.Buffer
			code := tool.ExecContext(t.Context(), Command, tc.args, &stdout, &stderr)
			assert.Equal(t, tc.code, code)
			assert.Equal(t, tc.stdout, stdout.String())
			assert.Equal(t, tc.stderr, stderr.String())
		})
	}
	for _, l := range strings.Split(strings.TrimSuffix(help.String(), "\n"), "\n") {
		assert.LessOrEqual(t, len(l), 100, "help line too long: %q", l)
	}
}
