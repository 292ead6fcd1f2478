package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceCapture is the kernel rxe capture the trace package's tests draw.
const traceCapture = "internal/trace/testdata/kernel-rxe-rc-uc-ud.pcapng"

func TestTraceCommand(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args      []string
		code      int
		out       string // a file the command must have written, "" for none
		stdoutHas string
		stderrHas string
		stdoutSVG bool
		outPrefix string
	}{
		{args: []string{"trace", traceCapture, "-o", filepath.Join(dir, "a.svg"), "-qp", "0x11"}, code: exitOK,
			out: filepath.Join(dir, "a.svg"), outPrefix: `<svg xmlns="http://www.w3.org/2000/svg" id="ladder"`},
		{args: []string{"trace", "-port", "50448", traceCapture, "-o", filepath.Join(dir, "b.html")}, code: exitOK,
			out: filepath.Join(dir, "b.html"), outPrefix: "<!DOCTYPE html>"},
		{args: []string{"trace", "-qp", "0x11", traceCapture}, code: exitOK, stdoutSVG: true},
		{args: []string{"trace", "-h"}, code: exitOK, stdoutHas: "Usage: gorxe trace FILE"},
		{args: []string{"trace"}, code: exitUsage, stderrHas: "want one capture file"},
		{args: []string{"trace", traceCapture, "-o", filepath.Join(dir, "c.png")}, code: exitUsage, stderrHas: ".svg or .html"},
		{args: []string{"trace", filepath.Join(dir, "missing.pcap")}, code: exitFailure, stderrHas: "no such file"},
		{args: []string{"trace", "-qp", "0x999", traceCapture}, code: exitFailure, stderrHas: "no RoCEv2 packets to draw"},
	} {
		code, stdout, stderr := run(tc.args...)
		assert.Equal(t, tc.code, code, "%q: %s", tc.args, stderr)
		assert.Contains(t, stdout, tc.stdoutHas, "%q", tc.args)
		assert.Contains(t, stderr, tc.stderrHas, "%q", tc.args)
		if tc.stdoutSVG {
			var root struct{ XMLName xml.Name }
			require.NoError(t, xml.Unmarshal([]byte(stdout), &root), "%q", tc.args)
			assert.Equal(t, "svg", root.XMLName.Local)
		}
		if tc.out != "" {
			b, err := os.ReadFile(tc.out)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(b), tc.outPrefix), "%q", tc.args)
		}
	}
}

// TestTraceErrorLines: a failure is one line, "gorxe trace: " and why, naming each file once
// and no package ("gorxe trace: trace: ..." before).
func TestTraceErrorLines(t *testing.T) {
	dir := t.TempDir()
	missing, notes := filepath.Join(dir, "missing.pcap"), writeTemp(t, "notes.txt", []byte("hello\n"))
	unwritable := filepath.Join(dir, "none", "x.svg")
	for _, tc := range []struct {
		args []string
		code int
		line string // the first line of stderr
	}{
		{[]string{missing}, exitFailure, "gorxe trace: open " + missing + ": no such file or directory"},
		{[]string{notes}, exitFailure, "gorxe trace: " + notes + ": capture unreadable after frame 0: not a pcap or pcapng capture"},
		{[]string{traceCapture, "-o", unwritable}, exitFailure, "gorxe trace: open " + unwritable + ": no such file or directory"},
		{[]string{"-qp", "0x999", traceCapture}, exitFailure, "gorxe trace: " + traceCapture + ": no RoCEv2 packets to draw"},
		{[]string{"-o", "x.png", traceCapture}, exitUsage, "gorxe trace: output name must end in .svg or .html"},
		{nil, exitUsage, "gorxe trace: bad command line: want one capture file, got 0"},
	} {
		code, stdout, stderr := run(append([]string{"trace"}, tc.args...)...)
		assert.Equal(t, tc.code, code, "%q", tc.args)
		assert.Empty(t, stdout, "%q", tc.args)
		first, rest, _ := strings.Cut(stderr, "\n")
		assert.Equal(t, tc.line, first, "%q", tc.args)
		if tc.code == exitFailure {
			assert.Empty(t, rest, "%q: one line", tc.args)
		}
	}
}
