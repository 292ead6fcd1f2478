package packet

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRNRTimerTable(t *testing.T) {
	for _, tc := range []struct {
		code uint8
		want time.Duration
	}{
		{0, 655360 * time.Microsecond},
		{1, 10 * time.Microsecond},
		{12, 640 * time.Microsecond},
		{14, 1280 * time.Microsecond},
		{25, 61440 * time.Microsecond}, // the spec's value, not rxe's 61410
		{31, 491520 * time.Microsecond},
		{32 + 1, 10 * time.Microsecond}, // only the low five bits count
	} {
		got := RNRTimer(tc.code)
		assert.Equal(t, tc.want, got, "RNRTimer(%d) = %v, want %v", tc.code, got, tc.want)
	}
}
