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
	assert.Equal(t, "gorxe: standard input: dump: not a pcap or pcapng capture\n", errOut)
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
