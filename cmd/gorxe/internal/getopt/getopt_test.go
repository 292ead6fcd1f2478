package getopt

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type parsed struct {
	port, iters int
	dev         string
	events, chk bool
}

func options(p *parsed) []Option {
	return []Option{
		{Short: 'p', Long: "port", Arg: true, Set: IntOption(&p.port, 0, 65535)},
		{Short: 'n', Long: "iters", Arg: true, Set: IntOption(&p.iters, 0, 1<<31-1)},
		{Short: 'd', Long: "ib-dev", Arg: true, Set: StringOption(&p.dev)},
		{Short: 'e', Long: "events", Set: FlagOption(&p.events)},
		{Short: 'c', Long: "chk", Set: FlagOption(&p.chk)},
		{Long: "ib-port", Arg: true, Set: StringOption(new(string))},
	}
}

func TestGetopt(t *testing.T) {
	tests := []struct {
		args     []string
		want     parsed
		operands []string
	}{
		{nil, parsed{}, nil},
		{[]string{"-p", "1234"}, parsed{port: 1234}, nil},
		{[]string{"-p1234"}, parsed{port: 1234}, nil},
		{[]string{"-p", "0x10"}, parsed{port: 16}, nil},
		{[]string{"-p", "010"}, parsed{port: 8}, nil},
		{[]string{"--port=99", "--iters", "7"}, parsed{port: 99, iters: 7}, nil},
		{[]string{"--it=3"}, parsed{iters: 3}, nil},
		{[]string{"-ec"}, parsed{events: true, chk: true}, nil},
		{[]string{"-ecn5"}, parsed{events: true, chk: true, iters: 5}, nil},
		{[]string{"-en", "5", "host"}, parsed{events: true, iters: 5}, []string{"host"}},
		{[]string{"host", "-n", "5"}, parsed{iters: 5}, []string{"host"}},
		{[]string{"-d", "-x"}, parsed{dev: "-x"}, nil},
		{[]string{"--", "-n"}, parsed{}, []string{"-n"}},
		{[]string{"-"}, parsed{}, []string{"-"}},
		{[]string{"--events", "--chk"}, parsed{events: true, chk: true}, nil},
	}
	for _, tc := range tests {
		var got parsed
		ops, err := Parse(tc.args, options(&got))
		if !assert.NoError(t, err, "Parse(%q)", tc.args) {
			continue
		}
		assert.Equal(t, tc.want, got, "Parse(%q) = %+v %q, want %+v %q", tc.args, got, ops, tc.want, tc.operands)
		assert.Equal(t, tc.operands, ops, "Parse(%q) = %+v %q, want %+v %q", tc.args, got, ops, tc.want, tc.operands)
	}
}

// TestParseInOrder: the options end at the first operand; what follows it, options included, is
// returned untouched, and "--" still ends the options.
func TestParseInOrder(t *testing.T) {
	tests := []struct {
		args     []string
		want     parsed
		operands []string
	}{
		{nil, parsed{}, nil},
		{[]string{"-n", "5", "prog", "-n", "7", "--chk"}, parsed{iters: 5}, []string{"prog", "-n", "7", "--chk"}},
		{[]string{"-e", "--", "-n", "7"}, parsed{events: true}, []string{"-n", "7"}},
		{[]string{"prog", "--", "x"}, parsed{}, []string{"prog", "--", "x"}},
		{[]string{"-", "-e"}, parsed{}, []string{"-", "-e"}},
		{[]string{"--port=9", "-ec"}, parsed{port: 9, events: true, chk: true}, nil},
	}
	for _, tc := range tests {
		var got parsed
		ops, err := ParseInOrder(tc.args, options(&got))
		if !assert.NoError(t, err, "ParseInOrder(%q)", tc.args) {
			continue
		}
		assert.Equal(t, tc.want, got, "ParseInOrder(%q)", tc.args)
		assert.Equal(t, tc.operands, ops, "ParseInOrder(%q)", tc.args)
	}
	_, err := ParseInOrder([]string{"-z", "prog"}, options(new(parsed)))
	assert.EqualError(t, err, "invalid option -- 'z'")
}

func TestGetoptErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"-z"}, "invalid option -- 'z'"},
		{[]string{"-p"}, "option requires an argument -- 'p'"},
		{[]string{"--port"}, "option '--port' requires an argument"},
		{[]string{"--events=1"}, "option '--events' doesn't allow an argument"},
		{[]string{"--nope"}, "unrecognized option '--nope'"},
		{[]string{"--ib"}, "option '--ib' is ambiguous"},
		{[]string{"-p", "70000"}, "-p 70000: out of range (0..65535)"},
		{[]string{"--port=abc"}, "--port abc: not a number"},
		{[]string{"-n", "1_0"}, "-n 1_0: not a number"},
	}
	for _, tc := range tests {
		var p parsed
		_, err := Parse(tc.args, options(&p))
		assert.ErrorIs(t, err, ErrUsage, "Parse(%q) = %v, want ErrUsage ending %q", tc.args, err, tc.msg)
		assert.True(t, strings.HasSuffix(err.Error(), tc.msg), "Parse(%q) = %v, want ErrUsage ending %q", tc.args, err, tc.msg)
	}
}

func TestDurationOption(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"10s", 10 * time.Second, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"3", 3 * time.Second, ""},
		{"0", 0, ""},
		{"-1s", 0, "negative"},
		{"soon", 0, "not a duration"},
	} {
		var d time.Duration
		err := DurationOption(&d)(tc.in)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		assert.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, d, tc.in)
	}
}
