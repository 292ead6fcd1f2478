package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDumpStdin reads the capture from standard input with "-".
func TestDumpStdin(t *testing.T) {
	golden, err := os.ReadFile(goldenPcapng)
	require.NoError(t, err)
	saved := stdin
	t.Cleanup(func() { stdin = saved })
	stdin = bytes.NewReader(golden)
	code, out, errOut := run("dump", "-op", "FETCH_ADD", "-")
	require.Equal(t, exitOK, code, errOut)
	assert.True(t, strings.HasPrefix(out, "#1911 "), out)
	assert.Empty(t, errOut)

	stdin = strings.NewReader("not a capture")
	code, _, errOut = run("dump", "-")
	assert.Equal(t, exitFailure, code)
	assert.Equal(t, "gorxe dump: standard input: not a pcap or pcapng capture\n", errOut)
}

func TestDumpFlags(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		first string // first line of stdout
		err   string // substring of stderr; "" for none
	}{
		{"absolute time", []string{"-abs", "-qp", "0x11", "-op", "ACKNOWLEDGE"}, exitOK,
			"#5 2026-11-21T22:44:30.067235Z 10.99.0.2:49441 > 10.99.0.3:4791 RC_ACKNOWLEDGE dqpn=0x000011 psn=6186380 syndrome=ACK msn=1 len=0 icrc=ok", ""},
		{"relative time and opcode list", []string{"-op", "rc_fetch_add,0x12"}, exitOK,
			"#1911 ", ""},
		{"json keeps its records", []string{"-json", "-op", "RC_ACKNOWLEDGE"}, exitOK,
			`{"frame":5,"src":"10.99.0.2:49441","dst":"10.99.0.3:4791","opcode":17,`, ""},
		{"no match", []string{"-qp", "99999"}, exitOK, "",
			"no packet matches the filter: the capture holds 2540 RoCEv2 packets, none of them selected"},
		{"extra ports", []string{"-port", "5000,6000", "-port", "7000", "-qp", "99999"}, exitOK, "", "none of them selected"},
		{"bad port", []string{"-port", "70000"}, exitUsage, "", `"70000" is not a UDP port`},
		{"bad qp", []string{"-qp", "0x1000000"}, exitUsage, "", "is not a 24-bit QP number"},
		{"bad opcode", []string{"-op", "SEND,WRITE"}, exitUsage, "", `"WRITE" names no opcode`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(append(append([]string{"dump"}, tc.args...), goldenPcapng)...)
			assert.Equal(t, tc.code, code, errOut)
			if tc.first == "" {
				assert.Empty(t, out)
			} else {
				assert.True(t, strings.HasPrefix(out, tc.first), "output starts %q", out[:min(len(out), 200)])
			}
			if tc.err == "" {
				assert.Empty(t, errOut)
			} else {
				assert.Contains(t, errOut, tc.err)
			}
		})
	}
}

// TestDumpArgs: flags go before or after FILE, as trace takes them, and a command line without
// exactly one file says so on its first line.
func TestDumpArgs(t *testing.T) {
	const cmCapture = "../../docs/walkthrough/cm-rping.pcapng"
	_, before, _ := run("dump", "-v", "-op", "RTU", cmCapture)
	code, after, errOut := run("dump", cmCapture, "-v", "-op", "RTU")
	require.Equal(t, exitOK, code, errOut)
	assert.Empty(t, errOut)
	assert.Equal(t, before, after)
	assert.True(t, strings.HasPrefix(after, "#3 0.013978 127.0.0.1:55410 > 127.0.0.2:14793 UD_SEND_ONLY dqpn=0x000001 psn=1 qkey=0x80010000 srcqp=0x000001 cm=RTU "), after)
	assert.Contains(t, after, "\n  MAD:", "-v after FILE explains the packet")

	code, out, _ := run("dump", "-op", "REQ", cmCapture, "-json")
	require.Equal(t, exitOK, code)
	assert.Equal(t, 1, strings.Count(out, "\n"))
	assert.True(t, strings.HasPrefix(out, `{"frame":1,`), out)
	assert.Contains(t, out, `"cm":"REQ"`)

	for _, tc := range []struct {
		args  []string
		first string // the first line of stderr
	}{
		{[]string{}, `gorxe dump: no capture file given (name one, or "-" for standard input)`},
		{[]string{"-v", "-op", "REQ"}, `gorxe dump: no capture file given (name one, or "-" for standard input)`},
		{[]string{"a.pcap", "-v", "b.pcap"}, "gorxe dump: one capture file at a time, got 2: a.pcap b.pcap"},
		{[]string{cmCapture, "-x"}, "flag provided but not defined: -x"},
		{[]string{cmCapture, "-op", "WRITE"}, `invalid value "WRITE" for flag -op: bad filter: "WRITE" names no opcode or connection manager message`},
	} {
		code, out, errOut := run(append([]string{"dump"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, "%q", tc.args)
		assert.Empty(t, out, "%q", tc.args)
		first, rest, _ := strings.Cut(errOut, "\n")
		assert.Equal(t, tc.first, first, "%q", tc.args)
		assert.Contains(t, rest, "Usage: gorxe dump ", "%q: the usage follows", tc.args)
	}
}
