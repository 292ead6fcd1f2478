package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/dump"
)

// The golden capture of real kernel rxe traffic lives with the packet
// package; the dump package checks its JSON against Wireshark's decoding.
const goldenPcapng = "../../packet/testdata/kernel-rxe-rc-uc-ud.pcapng"

func run(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestDumpJSON runs `gorxe dump -json` on the golden capture: it must print
// what the dump package prints (which is checked against Wireshark there),
// one record per frame, every ICRC verified.
func TestDumpJSON(t *testing.T) {
	code, out, errOut := run("dump", "-json", goldenPcapng)
	require.Equal(t, exitOK, code, "exit %d, stderr %q", code, errOut)
	require.Equal(t, "", errOut, "exit %d, stderr %q", code, errOut)
	f, err := os.Open(goldenPcapng)
	require.NoError(t, err)
	defer f.Close()
	var want bytes.Buffer
	if _, err := dump.Run(&want, &bytes.Buffer{}, f, dump.FormatJSON); err != nil {
		require.Fail(t, fmt.Sprint(err))
	}
	assert.Equal(t, want.String(), out, "gorxe dump -json differs from dump.Run")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	assert.Len(t, lines, 2540, "%d records, %d with icrc_ok, want 2540", len(lines), strings.Count(out, `"icrc_ok":true}`))
	assert.Equal(t, 2540, strings.Count(out, `"icrc_ok":true}`), "%d records, %d with icrc_ok, want 2540", len(lines), strings.Count(out, `"icrc_ok":true}`))
	const first = `{"frame":1,"src":"10.99.0.3:49441","dst":"10.99.0.2:4791","opcode":0,"opname":"RC_SEND_FIRST","se":false,"migreq":false,"pad":0,"tver":0,"pkey":65535,"fecn":false,"becn":false,"dqpn":17,"ackreq":false,"psn":6186377,"payload_len":1024,"icrc":"0x4ca933aa","icrc_ok":true}`
	assert.Equal(t, first, lines[0], "first record\n%s\nwant\n%s", lines[0], first)
}

func TestDumpFormats(t *testing.T) {
	code, out, _ := run("dump", goldenPcapng)
	want := "#1 0.000000 10.99.0.3:49441 > 10.99.0.2:4791 RC_SEND_FIRST dqpn=0x000011 psn=6186377 len=1024 icrc=ok\n"
	if code != exitOK || !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 2540 {
		assert.Fail(t, fmt.Sprintf("exit %d, output starts %q", code, out[:min(len(out), 200)]))
	}
	code, out, _ = run("dump", "-v", goldenPcapng)
	assert.Equal(t, exitOK, code, "-v: exit %d, %d verified ICRCs", code, strings.Count(out, "verified: OK"))
	assert.Equal(t, 2540, strings.Count(out, "verified: OK"), "-v: exit %d, %d verified ICRCs", code, strings.Count(out, "verified: OK"))
}

// writeTemp writes b to a file in a fresh directory and returns its name.
func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// shortFramePcap returns a capture holding one Ethernet frame of 10 bytes.
func shortFramePcap(t *testing.T) []byte {
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	require.NoError(t, w.WriteFileHeader(65535, gplayers.LinkTypeEthernet))
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: 10, Length: 10}
	require.NoError(t, w.WritePacket(ci, make([]byte, 10)))
	return b.Bytes()
}

func TestDumpErrors(t *testing.T) {
	golden, err := os.ReadFile(goldenPcapng)
	require.NoError(t, err)
	missing, notes := filepath.Join(t.TempDir(), "nope.pcap"), writeTemp(t, "notes.txt", []byte("hello\n"))
	tests := []struct {
		name      string
		args      []string
		code      int
		stdoutN   int    // lines on stdout
		stderrHas string // substring of stderr
	}{
		{"missing file", []string{"dump", missing}, exitFailure, 0, "gorxe dump: open " + missing + ": no such file or directory\n"},
		{"not a capture", []string{"dump", notes}, exitFailure, 0, "gorxe dump: " + notes + ": not a pcap or pcapng capture\n"},
		{"truncated capture", []string{"dump", writeTemp(t, "cut.pcapng", golden[:100000])}, exitFailure, 108, "truncated"},
		{"frame too short", []string{"dump", writeTemp(t, "short.pcap", shortFramePcap(t))}, exitOK, 0, "frame 1 (10 bytes): bad Ethernet"},
		{"no file", []string{"dump"}, exitUsage, 0, "Usage: gorxe dump"},
		{"two files", []string{"dump", "a", "b"}, exitUsage, 0, "Usage: gorxe dump"},
		{"json and verbose", []string{"dump", "-json", "-v", goldenPcapng}, exitUsage, 0, "-json and -v do not combine"},
		{"bad flag", []string{"dump", "-x", goldenPcapng}, exitUsage, 0, "flag provided but not defined"},
		{"dump help", []string{"dump", "-h"}, exitOK, 0, "Usage: gorxe dump"},
		{"no command", nil, exitUsage, 0, "Usage:"},
		{"unknown command", []string{"frobnicate"}, exitUsage, 0, `unknown command "frobnicate"`},
		{"tour arguments", []string{"tour", "x"}, exitUsage, 0, "Usage: gorxe tour"},
		{"demo arguments", []string{"demo", "x"}, exitUsage, 0, "Usage: gorxe demo"},
		{"demo bad faults", []string{"demo", "-faults", "loss=2"}, exitUsage, 0, "loss"},
		{"stats no address", []string{"stats"}, exitUsage, 0, "Usage: gorxe stats"},
		{"stats help", []string{"stats", "-h"}, exitOK, 10, ""},
		{"stats nothing there", []string{"stats", "-once", "127.0.0.1:1"}, exitFailure, 0,
			"gorxe stats: nothing is serving metrics at 127.0.0.1:1 (is a gorxe tool running with --metrics 127.0.0.1:1?)\n"},
	}
	for _, tt := range tests {
		code, out, errOut := run(tt.args...)
		assert.Equal(t, tt.code, code, "%s: exit %d, %d stdout lines, stderr %q; want exit %d, %d lines, stderr with %q", tt.name, code, strings.Count(out, "\n"), errOut, tt.code, tt.stdoutN, tt.stderrHas)
		assert.Equal(t, tt.stdoutN, strings.Count(out, "\n"), "%s: exit %d, %d stdout lines, stderr %q; want exit %d, %d lines, stderr with %q", tt.name, code, strings.Count(out, "\n"), errOut, tt.code, tt.stdoutN, tt.stderrHas)
		assert.Contains(t, errOut, tt.stderrHas, "%s: exit %d, %d stdout lines, stderr %q; want exit %d, %d lines, stderr with %q", tt.name, code, strings.Count(out, "\n"), errOut, tt.code, tt.stdoutN, tt.stderrHas)
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := run("help")
	assert.Equal(t, exitOK, code, "exit %d", code)
	for _, c := range commands {
		assert.Contains(t, out, c.Synopsis, "help does not show %q", c.Synopsis)
	}
}

// TestHelpCommand: gorxe help COMMAND is the command's own help, as gorxe COMMAND -h.
func TestHelpCommand(t *testing.T) {
	for _, name := range []string{"rping", "write_bw", "rc_pingpong", "dump", "tour", "version", "exec"} {
		code, out, errOut := run("help", name)
		require.Equal(t, exitOK, code, "%s: %s", name, errOut)
		_, want, _ := run(name, "-h")
		if name == "dump" {
			_, _, want = run(name, "-h") // dump's flag package writes its help on stderr
			out = errOut
		}
		assert.Equal(t, want, out, name)
		assert.NotContains(t, out, "Environment:", "%s: the global help instead of the command's", name)
	}
	code, _, errOut := run("help", "nosuch")
	assert.Equal(t, exitUsage, code)
	assert.True(t, strings.HasPrefix(errOut, "gorxe help: unknown command \"nosuch\"\n"), errOut)
}

// noDevice are the commands that open no device of their own, so take none of the common options.
var noDevice = []string{"dump", "trace", "tour", "stats", "version", "devinfo", "exec"}

// TestCommonOptionsInEveryHelp: every tool that opens a device lists the common options.
func TestCommonOptionsInEveryHelp(t *testing.T) {
	for _, c := range commands {
		if slices.Contains(noDevice, c.Name) {
			continue
		}
		_, out, _ := run(c.Name, "-h")
		for _, opt := range []string{"bind", "pcap", "log-level", "metrics", "counters"} {
			if c.Name == "demo" && opt == "bind" {
				continue // its two devices bind to -a and -b
			}
			assert.Contains(t, out, "-"+opt, "gorxe %s -h", c.Name)
		}
	}
}

// TestCommonOptionsEveryTool: every tool that opens a device takes each common option, with the
// least of its own command line it needs besides, as its -h says.
func TestCommonOptionsEveryTool(t *testing.T) {
	own := map[string][]string{"rping": {"-s"}, "mckey": {"-m", "239.1.2.3"}}
	common := []string{"--bind=127.0.0.1", "--pcap=run.pcapng", "--log-level=debug", "--metrics=127.0.0.1:0", "--counters"}
	for _, c := range commands {
		if slices.Contains(noDevice, c.Name) {
			continue
		}
		_, err := c.Parse(own[c.Name])
		require.NoError(t, err, "gorxe %s %s", c.Name, strings.Join(own[c.Name], " "))
		for _, opt := range common {
			if c.Name == "demo" && strings.HasPrefix(opt, "--bind") {
				continue // its two devices bind to -a and -b
			}
			_, err := c.Parse(append([]string{opt}, own[c.Name]...))
			assert.NoError(t, err, "gorxe %s %s", c.Name, opt)
		}
	}
}
