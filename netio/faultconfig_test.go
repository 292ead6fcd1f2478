package netio

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFaultConfig(t *testing.T) {
	got, err := ParseFaultConfig("loss=0.05,reorder=0.02,dup=0.01,corrupt=0.001,delay=1ms,seed=7")
	want := FaultConfig{Loss: 0.05, Reorder: 0.02, Dup: 0.01, Corrupt: 0.001, Delay: time.Millisecond, Seed: 7}
	require.NoError(t, err, "ParseFaultConfig = %+v, %v; want %+v", got, err, want)
	require.Equal(t, want, got, "ParseFaultConfig = %+v, %v; want %+v", got, err, want)
	s := got.String()
	require.Equal(t, "loss=0.05,reorder=0.02,dup=0.01,corrupt=0.001,delay=1ms,seed=7", s, "String = %q", s)
	got, err = ParseFaultConfig(" jitter=250us , reorder_delay=3ms,seed=0x10,")
	want = FaultConfig{Jitter: 250 * time.Microsecond, ReorderDelay: 3 * time.Millisecond, Seed: 16}
	require.NoError(t, err, "ParseFaultConfig = %+v, %v; want %+v", got, err, want)
	require.Equal(t, want, got, "ParseFaultConfig = %+v, %v; want %+v", got, err, want)
	if got, err := ParseFaultConfig(""); err != nil || got != (FaultConfig{}) || got.Enabled() {
		require.Fail(t, fmt.Sprintf("empty spec = %+v, %v", got, err))
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
		assert.NoError(t, err, "round trip of %+v via %q = %+v, %v", c, c.String(), got, err)
		assert.Equal(t, c, got, "round trip of %+v via %q = %+v, %v", c, c.String(), got, err)
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
		assert.ErrorIs(t, err, tt.want, "ParseFaultConfig(%q) = %v, want %v", tt.spec, err, tt.want)
		assert.ErrorAs(t, err, &se, "ParseFaultConfig(%q) = %v, want %v", tt.spec, err, tt.want)
	}
	_, err := ParseFaultConfig("loss=0.1,bogus=1")
	assert.False(t, err == nil || err.Error() != `fault spec "bogus=1": unknown key (want one of loss, reorder, dup, corrupt, delay, jitter, reorder_delay, seed)`, "error text = %v", err)
}

func TestFaultConfigValidate(t *testing.T) {
	err := (FaultConfig{Dup: 2}).Validate()
	assert.ErrorIs(t, err, ErrInvalidFaultValue, "Validate(dup=2) = %v", err)
	err = (FaultConfig{Jitter: -1}).Validate()
	assert.ErrorIs(t, err, ErrInvalidFaultValue, "Validate(jitter=-1) = %v", err)
	assert.NoError(t, (FaultConfig{Loss: 1, Delay: 1}).Validate(), "Validate of a valid config")
}

func TestFaultConfigFromEnv(t *testing.T) {
	t.Setenv(EnvFaults, "loss=0.25,seed=9")
	got, err := FaultConfigFromEnv()
	require.NoError(t, err, "FaultConfigFromEnv = %+v, %v", got, err)
	require.Equal(t, (FaultConfig{Loss: 0.25, Seed: 9}), got, "FaultConfigFromEnv = %+v, %v", got, err)
	t.Setenv(EnvFaults, "")
	if got, err := FaultConfigFromEnv(); err != nil || got.Enabled() {
		require.Fail(t, fmt.Sprintf("empty env = %+v, %v", got, err))
	}
	t.Setenv(EnvFaults, "lost=1")
	if _, err := FaultConfigFromEnv(); !errors.Is(err, ErrUnknownFaultKey) {
		require.Fail(t, fmt.Sprintf("bad env = %v", err))
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
		require.NoError(t, c.Validate(), "parsed config %+v invalid", c)
		again, err := ParseFaultConfig(c.String())
		require.NoError(t, err, "round trip of %q: %+v -> %q -> %+v, %v", s, c, c.String(), again, err)
		require.Equal(t, c, again, "round trip of %q: %+v -> %q -> %+v, %v", s, c, c.String(), again, err)
	})
}
