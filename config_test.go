package gorxe

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GORXE_PORT is the default of Config.Port for every program, as GORXE_FAULTS is for faults.
func TestEnvPort(t *testing.T) {
	base := Config{Addr: mustAddr("10.0.0.1")}
	t.Setenv(EnvPort, "")
	rc, err := base.resolve()
	require.NoError(t, err)
	assert.Equal(t, uint16(DefaultPort), rc.port)

	t.Setenv(EnvPort, "14791")
	rc, err = base.resolve()
	require.NoError(t, err)
	assert.Equal(t, uint16(14791), rc.port)

	explicit := base
	explicit.Port = 5000
	rc, err = explicit.resolve()
	require.NoError(t, err)
	assert.Equal(t, uint16(5000), rc.port, "Config.Port wins over the environment")

	for _, bad := range []string{"0", "70000", "x"} {
		t.Setenv(EnvPort, bad)
		_, err = base.resolve()
		assert.ErrorIs(t, err, ErrInvalidConfig, bad)
	}
}

// PortFromEnv is what Open reads, for programs that need the port before they open a device.
func TestPortFromEnv(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  uint16
		err   string
	}{
		{"", 0, ""},
		{"14791", 14791, ""},
		{"0", 0, `GORXE_PORT="0" is not a UDP port number (1-65535)`},
		{"70000", 0, `GORXE_PORT="70000" is not a UDP port number (1-65535)`},
		{"x", 0, `GORXE_PORT="x" is not a UDP port number (1-65535)`},
	} {
		p, err := PortFromEnv(func(k string) string {
			require.Equal(t, EnvPort, k)
			return tt.value
		})
		if tt.err != "" {
			assert.EqualError(t, err, tt.err, tt.value)
		} else {
			assert.NoError(t, err, tt.value)
		}
		assert.Equal(t, tt.want, p, tt.value)
	}
}
