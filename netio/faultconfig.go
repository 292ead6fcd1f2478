package netio

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// EnvFaults is the environment variable read by [FaultConfigFromEnv].
const EnvFaults = "GORXE_FAULTS"

// DefaultReorderDelay is how long a reordered datagram is held back when
// [FaultConfig.ReorderDelay] is zero.
const DefaultReorderDelay = time.Millisecond

// FaultConfig describes the impairments applied to each datagram on a path. Probabilities are in
// [0, 1] and are drawn independently per datagram from a generator seeded with Seed, so the same
// configuration applied to the same sequence of datagrams produces the same faults.
//
// Its text form, accepted by [ParseFaultConfig] and produced by String, is a comma-separated list
// of key=value pairs, for example "loss=0.05,reorder=0.02,dup=0.01,corrupt=0.001,delay=1ms,seed=7".
// Keys: loss, reorder, dup, corrupt (probabilities), delay, jitter, reorder_delay (Go durations)
// and seed (an unsigned integer).
type FaultConfig struct {
	// Loss is the probability that a datagram is dropped.
	Loss float64
	// Reorder is the probability that a datagram is held back by ReorderDelay, letting the
	// datagrams sent after it overtake it.
	Reorder float64
	// Dup is the probability that a datagram is delivered twice.
	Dup float64
	// Corrupt is the probability that one randomly chosen bit of the datagram is flipped.
	Corrupt float64
	// Delay is added to every datagram's delivery time.
	Delay time.Duration
	// Jitter adds a uniformly distributed extra delay in [0, Jitter) per datagram.
	Jitter time.Duration
	// ReorderDelay is the hold-back of a reordered datagram; zero means DefaultReorderDelay.
	ReorderDelay time.Duration
	// Seed seeds the fault generator.
	Seed uint64
}

// Enabled reports whether c impairs anything.
func (c FaultConfig) Enabled() bool {
	return c.Loss > 0 || c.Reorder > 0 || c.Dup > 0 || c.Corrupt > 0 || c.Delay > 0 || c.Jitter > 0
}

// String returns the text form of c, listing only non-zero fields in a fixed order. The zero
// configuration is the empty string. ParseFaultConfig(c.String()) returns c.
func (c FaultConfig) String() string {
	var b strings.Builder
	add := func(key, val string) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(key)
		b.WriteByte('=')
		b.WriteString(val)
	}
	for _, p := range c.probabilities() {
		if *p.v != 0 {
			add(p.key, strconv.FormatFloat(*p.v, 'g', -1, 64))
		}
	}
	for _, d := range c.durations() {
		if *d.v != 0 {
			add(d.key, d.v.String())
		}
	}
	if c.Seed != 0 {
		add("seed", strconv.FormatUint(c.Seed, 10))
	}
	return b.String()
}

// Errors wrapped by [FaultSpecError].
var (
	ErrUnknownFaultKey   = errors.New("unknown key")
	ErrInvalidFaultValue = errors.New("invalid value")
	ErrDuplicateFaultKey = errors.New("key given twice")
	ErrMalformedFault    = errors.New("item is not key=value")
)

// FaultSpecError reports a bad item in a fault specification string.
type FaultSpecError struct {
	Item string // the offending key=value item
	Err  error  // one of ErrUnknownFaultKey, ErrInvalidFaultValue, ErrDuplicateFaultKey, ErrMalformedFault
	Hint string // what was expected
}

func (e *FaultSpecError) Error() string {
	return fmt.Sprintf("fault spec %q: %v (%s)", e.Item, e.Err, e.Hint)
}

// Unwrap returns the sentinel describing the problem.
func (e *FaultSpecError) Unwrap() error { return e.Err }

const faultKeys = "loss, reorder, dup, corrupt, delay, jitter, reorder_delay, seed"

// ParseFaultConfig parses the text form described at [FaultConfig]. Whitespace around items is
// ignored; the empty string yields the zero configuration. Errors are *FaultSpecError.
func ParseFaultConfig(s string) (FaultConfig, error) {
	var c FaultConfig
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, val, ok := strings.Cut(item, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || key == "" {
			return FaultConfig{}, &FaultSpecError{Item: item, Err: ErrMalformedFault, Hint: "want key=value"}
		}
		if seen[key] {
			return FaultConfig{}, &FaultSpecError{Item: item, Err: ErrDuplicateFaultKey, Hint: "give each key once"}
		}
		seen[key] = true
		if err := c.set(key, val); err != nil {
			err.Item = item
			return FaultConfig{}, err
		}
	}
	return c, nil
}

// FaultConfigFromEnv parses the GORXE_FAULTS environment variable. Unset or empty yields the zero
// configuration.
func FaultConfigFromEnv() (FaultConfig, error) {
	return ParseFaultConfig(os.Getenv(EnvFaults))
}

func (c *FaultConfig) set(key, val string) *FaultSpecError {
	for _, p := range c.probabilities() {
		if p.key == key {
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
				return &FaultSpecError{Err: ErrInvalidFaultValue, Hint: "want a probability between 0 and 1"}
			}
			*p.v = f
			return nil
		}
	}
	for _, d := range c.durations() {
		if d.key == key {
			v, err := time.ParseDuration(val)
			if err != nil || v < 0 {
				return &FaultSpecError{Err: ErrInvalidFaultValue, Hint: "want a non-negative duration such as 1ms"}
			}
			*d.v = v
			return nil
		}
	}
	if key == "seed" {
		v, err := strconv.ParseUint(val, 0, 64)
		if err != nil {
			return &FaultSpecError{Err: ErrInvalidFaultValue, Hint: "want an unsigned integer"}
		}
		c.Seed = v
		return nil
	}
	return &FaultSpecError{Err: ErrUnknownFaultKey, Hint: "want one of " + faultKeys}
}

type probabilityField struct {
	key string
	v   *float64
}

type durationField struct {
	key string
	v   *time.Duration
}

// probabilities and durations list the fields in their text order, the one table both String and
// ParseFaultConfig use.
func (c *FaultConfig) probabilities() [4]probabilityField {
	return [4]probabilityField{{"loss", &c.Loss}, {"reorder", &c.Reorder}, {"dup", &c.Dup}, {"corrupt", &c.Corrupt}}
}

func (c *FaultConfig) durations() [3]durationField {
	return [3]durationField{{"delay", &c.Delay}, {"jitter", &c.Jitter}, {"reorder_delay", &c.ReorderDelay}}
}

// Validate reports a field outside its range, as a *FaultSpecError naming the field.
func (c FaultConfig) Validate() error {
	for _, p := range c.probabilities() {
		if math.IsNaN(*p.v) || *p.v < 0 || *p.v > 1 {
			return &FaultSpecError{Item: p.key + "=" + strconv.FormatFloat(*p.v, 'g', -1, 64),
				Err: ErrInvalidFaultValue, Hint: "want a probability between 0 and 1"}
		}
	}
	for _, d := range c.durations() {
		if *d.v < 0 {
			return &FaultSpecError{Item: d.key + "=" + d.v.String(),
				Err: ErrInvalidFaultValue, Hint: "want a non-negative duration"}
		}
	}
	return nil
}
