package getopt

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// ErrUsage matches every command-line error (errors.Is): the tool shows its usage after it.
var ErrUsage = errors.New("invalid usage")

// UsageError is a command line that does not parse; its text says why, as GNU getopt would.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Is makes every UsageError match ErrUsage.
func (e *UsageError) Is(target error) bool { return target == ErrUsage }

func usageErr(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// Option is one command-line option of a C-style tool: a short letter, a long name, or both.
type Option struct {
	Short byte   // 0: long form only
	Long  string // "": short form only
	// Arg says the option takes a value. Set receives it ("" for a flag) and returns an error for a
	// bad value.
	Arg bool
	Set func(value string) error
}

// Parse parses args the way glibc's getopt_long does for the rdma-core and perftest tools:
// clustered short flags (-ec), values attached or separate (-n10, -n 10), long options with = or a
// separate value (--iters=10, --iters 10), unambiguous long prefixes (--it), operands anywhere
// (options are permuted in front of them) and "--" ending the options. It returns the operands.
func Parse(args []string, opts []Option) ([]string, error) {
	return parse(args, opts, false)
}

// ParseInOrder is Parse for a command that runs another command line (as env and nice do): the
// options end at the first operand, as with getopt_long's REQUIRE_ORDER ("+" leading the short
// options), so the options after it are left to the command it names. It returns that operand
// and everything after it.
func ParseInOrder(args []string, opts []Option) ([]string, error) {
	return parse(args, opts, true)
}

// parse parses args; inOrder ends the options at the first operand.
func parse(args []string, opts []Option, inOrder bool) ([]string, error) {
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(operands, args[i+1:]...), nil
		case inOrder && (a == "-" || !strings.HasPrefix(a, "-")):
			return args[i:], nil
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			o, err := findLong(opts, name)
			if err != nil {
				return nil, err
			}
			switch {
			case o.Arg && !hasValue:
				if i+1 == len(args) {
					return nil, usageErr("option '--%s' requires an argument", o.Long)
				}
				i++
				value = args[i]
			case !o.Arg && hasValue:
				return nil, usageErr("option '--%s' doesn't allow an argument", o.Long)
			}
			if err := set(o, "--"+o.Long, value); err != nil {
				return nil, err
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				o := findShort(opts, a[j])
				if o == nil {
					return nil, usageErr("invalid option -- '%c'", a[j])
				}
				if !o.Arg {
					if err := set(o, "-"+string(a[j]), ""); err != nil {
						return nil, err
					}
					continue
				}
				value := a[j+1:]
				if value == "" {
					if i+1 == len(args) {
						return nil, usageErr("option requires an argument -- '%c'", a[j])
					}
					i++
					value = args[i]
				}
				if err := set(o, "-"+string(a[j]), value); err != nil {
					return nil, err
				}
				break
			}
		default:
			operands = append(operands, a)
		}
	}
	return operands, nil
}

func set(o *Option, name, value string) error {
	err := o.Set(value)
	var bad *badValue
	switch {
	case err == nil:
		return nil
	case errors.As(err, &bad):
		return fmt.Errorf("%s %s: %w", name, value, err)
	}
	return usageErr("%s %s: %v", name, value, err)
}

// badValue is a well-formed option whose value the C tools only find wrong once they use it, as
// an address getaddrinfo cannot resolve: an error, not a usage error.
type badValue struct{ msg string }

func (e *badValue) Error() string { return e.msg }

func findShort(opts []Option, c byte) *Option {
	for i := range opts {
		if opts[i].Short == c && c != 0 {
			return &opts[i]
		}
	}
	return nil
}

// findLong finds a long option by its name or an unambiguous prefix of it.
func findLong(opts []Option, name string) (*Option, error) {
	var match *Option
	for i := range opts {
		o := &opts[i]
		if o.Long == "" || !strings.HasPrefix(o.Long, name) || name == "" {
			continue
		}
		if o.Long == name {
			return o, nil
		}
		if match != nil {
			return nil, usageErr("option '--%s' is ambiguous", name)
		}
		match = o
	}
	if match == nil {
		return nil, usageErr("unrecognized option '--%s'", name)
	}
	return match, nil
}

// ParseInt parses a number as strtol with base 0 does: decimal, 0x hexadecimal or 0 octal, with
// an optional sign. Unlike strtol it rejects trailing garbage (and Go's _ digit separators).
func ParseInt(s string) (int64, error) {
	v, err := strconv.ParseInt(strings.ReplaceAll(s, "_", "!"), 0, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number")
	}
	return v, nil
}

// IntOption returns the Set function of an option holding an int in [lo, hi].
func IntOption(p *int, lo, hi int) func(string) error {
	return func(s string) error {
		v, err := ParseInt(s)
		if err != nil {
			return err
		}
		if v < int64(lo) || v > int64(hi) {
			return fmt.Errorf("out of range (%d..%d)", lo, hi)
		}
		*p = int(v)
		return nil
	}
}

// DurationOption returns the Set function of an option holding a non-negative duration: a Go
// duration (10s, 500ms) or a bare number of seconds, as the C tools' integer timeouts read.
func DurationOption(p *time.Duration) func(string) error {
	return func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil {
			v, ierr := ParseInt(s)
			if ierr != nil {
				return errors.New("not a duration (10s, 500ms) or a number of seconds")
			}
			d = time.Duration(v) * time.Second
		}
		if d < 0 {
			return errors.New("negative")
		}
		*p = d
		return nil
	}
}

// AddrOption returns the Set function of an option holding an IP address (an IPv4-mapped IPv6
// address is taken as the IPv4 address it maps), as the C tools' numeric addresses read. One that
// does not parse is an error, not a usage error, as it is for the C tools.
func AddrOption(p *netip.Addr) func(string) error {
	return func(s string) error {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return &badValue{"invalid IP address"}
		}
		*p = a.Unmap()
		return nil
	}
}

// StringOption returns the Set function of an option holding a string.
func StringOption(p *string) func(string) error {
	return func(s string) error { *p = s; return nil }
}

// FlagOption returns the Set function of a flag.
func FlagOption(p *bool) func(string) error {
	return func(string) error { *p = true; return nil }
}
