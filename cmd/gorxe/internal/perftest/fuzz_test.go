package perftest

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// capturedMessages returns every message of length n the two sides of the captured kernel
// perftest runs exchanged: the real inputs the parsers meet.
func capturedMessages(f *testing.F, n int) [][]byte {
	var out [][]byte
	for _, c := range perftestRuns(f) {
		for _, m := range c.msgs {
			if len(m.data) == n {
				out = append(out, m.data)
			}
		}
	}
	require.NotEmpty(f, out, "the capture holds no %d-byte messages", n)
	return out
}

// leadingDecimal is strtol's view of b for the values ParseMTU can accept: the number its
// leading decimal digits spell, or -1 when it exceeds any MTU.
func leadingDecimal(b []byte) int {
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int(c-'0')
		if v > 9 {
			return -1
		}
	}
	return v
}

// FuzzParseMTU: any message parses without panicking; it is accepted exactly when its leading
// digits name an ibv_mtu (1..5), and what is accepted is sent back identically by AppendMTU.
func FuzzParseMTU(f *testing.F) {
	for _, m := range capturedMessages(f, MTULen) {
		f.Add(m)
	}
	for m := gorxe.MTU256; m <= gorxe.MTU4096; m++ {
		f.Add(AppendMTU(nil, m))
	}
	for _, s := range []string{"", "0\x00", "6\x00", "05", "3x", "99999999999999999999", "-3"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, ok := ParseMTU(b)
		v := leadingDecimal(b)
		if v < int(gorxe.MTU256) || v > int(gorxe.MTU4096) {
			require.False(t, ok, "%q accepted as MTU %v", b, m)
			require.Equal(t, gorxe.MTU(0), m)
			return
		}
		require.True(t, ok, "%q (leading value %d) rejected", b, v)
		require.Equal(t, gorxe.MTU(v), m)
		back, ok := ParseMTU(AppendMTU(nil, m))
		require.True(t, ok)
		require.Equal(t, m, back)
	})
}

// FuzzParseSysData: a system-data message is accepted exactly when it has SysDataLen bytes, and
// an accepted value re-encodes to the same bytes.
func FuzzParseSysData(f *testing.F) {
	for _, m := range capturedMessages(f, SysDataLen) {
		f.Add(m)
	}
	f.Add(AppendSysData(nil, 4096))
	f.Add(AppendSysData(nil, -1))
	f.Add([]byte{0, 0, 0x10})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseSysData(b)
		if len(b) != SysDataLen {
			require.ErrorIs(t, err, ErrBadMessage)
			require.Equal(t, int32(0), v)
			return
		}
		require.NoError(t, err)
		require.Equal(t, b, AppendSysData(nil, v))
	})
}

// FuzzReportField: every field of the bandwidth report is set from exactly ReportFieldLen bytes,
// leaves the other fields alone, and is sent back bit for bit (NaNs and infinities included);
// other lengths are refused without touching the report.
func FuzzReportField(f *testing.F) {
	for _, m := range capturedMessages(f, ReportFieldLen) {
		for i := range ReportFields {
			f.Add(uint8(i), m)
		}
	}
	r := Report{Size: 65536, Iters: 5000, BWPeak: 11800.52, BWAvg: 11790.25, MsgRate: 0.188644}
	for i := range ReportFields {
		f.Add(uint8(i), AppendReportField(nil, &r, i))
	}
	f.Add(uint8(2), binary8(math.Float64bits(math.NaN())))
	f.Add(uint8(7), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, field uint8, b []byte) {
		i := int(field % ReportFields)
		before := Report{Size: 1, Iters: 2, BWPeak: 3, BWAvg: 4, MsgRate: 5}
		got := before
		err := SetReportField(&got, i, b)
		if len(b) != ReportFieldLen {
			require.ErrorIs(t, err, ErrBadMessage)
			require.Equal(t, before, got)
			return
		}
		require.NoError(t, err)
		require.Equal(t, b, AppendReportField(nil, &got, i), "field %d", i)
		for j := range ReportFields {
			if j != i {
				assert.True(t, bytes.Equal(AppendReportField(nil, &before, j), AppendReportField(nil, &got, j)),
					"setting field %d changed field %d", i, j)
			}
		}
	})
}

func binary8(v uint64) []byte {
	var b [8]byte
	for i := range b {
		b[7-i] = byte(v >> (8 * i))
	}
	return b[:]
}
