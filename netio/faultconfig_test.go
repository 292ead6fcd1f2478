package netio

import (
	"errors"
	"testing"
	"time"
)

func TestParseFaultConfig(t *testing.T) {
	got, err := ParseFaultConfig("loss=0.05,reorder=0.02,dup=0.01,corrupt=0.001,delay=1ms,seed=7")
	want := FaultConfig{Loss: 0.05, Reorder: 0.02, Dup: 0.01, Corrupt: 0.001, Delay: time.Millisecond, Seed: 7}
	if err != nil || got != want {
		t.Fatalf("ParseFaultConfig = %+v, %v; want %+v", got, err, want)
	}
	if s := got.String(); s != "loss=0.05,reorder=0.02,dup=0.01,corrupt=0.001,delay=1ms,seed=7" {
		t.Fatalf("String = %q", s)
	}
	got, err = ParseFaultConfig(" jitter=250us , reorder_delay=3ms,seed=0x10,")
	want = FaultConfig{Jitter: 250 * time.Microsecond, ReorderDelay: 3 * time.Millisecond, Seed: 16}
	if err != nil || got != want {
		t.Fatalf("ParseFaultConfig = %+v, %v; want %+v", got, err, want)
	}
	if got, err := ParseFaultConfig(""); err != nil || got != (FaultConfig{}) || got.Enabled() {
		t.Fatalf("empty spec = %+v, %v", got, err)
	}
}

func TestFaultConfigRoundTrip(t *testing.T) {
	for _, c := range []FaultConfig{
		{},
		{Loss: 1},
		{Loss: 1.0 / 3, Corrupt: 1e-9, Seed: 1<<64 - 1},
		{Delay: 1500 * time.Microsecond, Jitter: time.Nanosecond, ReorderDelay: time.Hour},
		{Loss: 0.05, Reorder: 0.02, Dup: 0.01, Corrupt: 0.001, Delay: time.Millisecond, Jitter: 3, ReorderDelay: 4, Seed: 7},
	} {
		got, err := ParseFaultConfig(c.String())
		if err != nil || got != c {
			t.Errorf("round trip of %+v via %q = %+v, %v", c, c.String(), got, err)
		}
	}
}

func TestParseFaultConfigErrors(t *testing.T) {
	for _, tt := range []struct {
		spec string
		want error
	}{
		{"drop=0.1", ErrUnknownFaultKey},
		{"Loss=0.1", ErrUnknownFaultKey},
		{"loss", ErrMalformedFault},
		{"=0.1", ErrMalformedFault},
		{"loss=", ErrInvalidFaultValue},
		{"loss=abc", ErrInvalidFaultValue},
		{"loss=1.5", ErrInvalidFaultValue},
		{"loss=-0.1", ErrInvalidFaultValue},
		{"loss=NaN", ErrInvalidFaultValue},
		{"delay=5", ErrInvalidFaultValue},
		{"delay=-1ms", ErrInvalidFaultValue},
		{"seed=-1", ErrInvalidFaultValue},
		{"seed=x", ErrInvalidFaultValue},
		{"loss=0.1,loss=0.2", ErrDuplicateFaultKey},
	} {
		_, err := ParseFaultConfig(tt.spec)
		var se *FaultSpecError
		if !errors.Is(err, tt.want) || !errors.As(err, &se) {
			t.Errorf("ParseFaultConfig(%q) = %v, want %v", tt.spec, err, tt.want)
		}
	}
	_, err := ParseFaultConfig("loss=0.1,bogus=1")
	if err == nil || err.Error() != `netio: fault spec "bogus=1": unknown key (want one of loss, reorder, dup, corrupt, delay, jitter, reorder_delay, seed)` {
		t.Errorf("error text = %v", err)
	}
}

func TestFaultConfigValidate(t *testing.T) {
	if err := (FaultConfig{Dup: 2}).Validate(); !errors.Is(err, ErrInvalidFaultValue) {
		t.Errorf("Validate(dup=2) = %v", err)
	}
	if err := (FaultConfig{Jitter: -1}).Validate(); !errors.Is(err, ErrInvalidFaultValue) {
		t.Errorf("Validate(jitter=-1) = %v", err)
	}
	if err := (FaultConfig{Loss: 1, Delay: 1}).Validate(); err != nil {
		t.Errorf("Validate of a valid config = %v", err)
	}
}

func TestFaultConfigFromEnv(t *testing.T) {
	t.Setenv(EnvFaults, "loss=0.25,seed=9")
	got, err := FaultConfigFromEnv()
	if err != nil || got != (FaultConfig{Loss: 0.25, Seed: 9}) {
		t.Fatalf("FaultConfigFromEnv = %+v, %v", got, err)
	}
	t.Setenv(EnvFaults, "")
	if got, err := FaultConfigFromEnv(); err != nil || got.Enabled() {
		t.Fatalf("empty env = %+v, %v", got, err)
	}
	t.Setenv(EnvFaults, "lost=1")
	if _, err := FaultConfigFromEnv(); !errors.Is(err, ErrUnknownFaultKey) {
		t.Fatalf("bad env = %v", err)
	}
}

func FuzzParseFaultConfig(f *testing.F) {
	f.Add("loss=0.05,reorder=0.02,dup=0.01,corrupt=0.001,delay=1ms,seed=7")
	f.Add("jitter=1h,reorder_delay=0s")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseFaultConfig(s)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed config %+v invalid: %v", c, err)
		}
		again, err := ParseFaultConfig(c.String())
		if err != nil || again != c {
			t.Fatalf("round trip of %q: %+v -> %q -> %+v, %v", s, c, c.String(), again, err)
		}
	})
}
