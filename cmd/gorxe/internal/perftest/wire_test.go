package perftest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// Each message kind of the capture parses, and encoding what was parsed gives back the exact
// bytes kernel rxe's perftest sent.
func TestCaptureMessagesRoundTrip(t *testing.T) {
	for i, c := range perftestRuns(t) {
		for _, client := range []bool{true, false} {
			for _, m := range c.side(client) {
				var again []byte
				switch len(m) {
				case VersionLen:
					text, num, err := ParseVersion(m)
					require.NoError(t, err, "run %d: version %q: %q %v %v", i, m, text, num, err)
					require.Equal(t, "6.06", text, "run %d: version %q: %q %v %v", i, m, text, num, err)
					require.Equal(t, 6.06, num, "run %d: version %q: %q %v %v", i, m, text, num, err)
					again = AppendVersion(nil, text)
				case SysDataLen:
					v, err := ParseSysData(m)
					require.NoError(t, err, "run %d: system data %x: %d %v", i, m, v, err)
					require.False(t, v != 4096 && v != 64, "run %d: system data %x: %d %v", i, m, v, err)
					again = AppendSysData(nil, v)
				case MTULen:
					mtu, ok := ParseMTU(m)
					require.True(t, ok, "run %d: MTU %q: %v %v", i, m, mtu, ok)
					require.Equal(t, gorxe.MTU1024, mtu, "run %d: MTU %q: %v %v", i, m, mtu, ok)
					again = AppendMTU(nil, mtu)
				case KeyLen:
					d, err := ParseKey(m)
					require.NoError(t, err, "run %d: key %q", i, m)
					again = AppendKey(nil, &d)
				case ReportFieldLen:
					continue // checked by TestCaptureReports
				case DoneLen:
					again = doneMsg
				default:
					require.Fail(t, fmt.Sprintf("run %d: unexpected message of %d bytes: %q", i, len(m), m))
				}
				assert.Equal(t, m, again, "run %d: re-encoded %q, captured %q", i, again, m)
			}
		}
	}
}

// The key messages carry what the rxe tools had: the write_bw client's QP 0x24 and so on.
func TestCaptureKeys(t *testing.T) {
	runs := perftestRuns(t)
	key := func(c *conversation, client bool) Dest {
		for _, m := range c.side(client) {
			if len(m) == KeyLen {
				d, err := ParseKey(m)
				require.NoError(t, err)
				return d
			}
		}
		require.Fail(t, "no key message")
		return Dest{}
	}
	client := GIDFromString(t, "10.99.0.3")
	server := GIDFromString(t, "10.99.0.2")
	tests := []struct {
		name   string
		run    int
		client bool
		want   Dest
	}{
		{"write_bw client", 0, true, Dest{OutReads: 1, QPN: 0x24, PSN: 0x8acac0, RKey: 0x65f, VAddr: 0x7f5303b1e000, GID: client}},
		{"write_bw server", 0, false, Dest{OutReads: 1, QPN: 0x24, PSN: 0x020de5, RKey: 0x6ac, VAddr: 0x7f1dee667000, GID: server}},
		{"read_bw client", 1, true, Dest{OutReads: 0x80, QPN: 0x25, PSN: 0xa0dbe7, RKey: 0x7cf, VAddr: 0x7f22cd338000, GID: client}},
		{"atomic_bw client", 3, true, Dest{OutReads: 0x80, QPN: 0x27, PSN: 0x842325, RKey: 0x9ff, VAddr: 0x5615d2493000, GID: client}},
		{"send_lat client", 4, true, Dest{OutReads: 1, QPN: 0x28, PSN: 0x778c63, RKey: 0, VAddr: 0x55c82247b000, GID: client}},
	}
	for _, tt := range tests {
		got := key(runs[tt.run], tt.client)
		assert.Equal(t, tt.want, got, "%s: got %+v, want %+v", tt.name, got, tt.want)
	}
}

// GIDFromString is the RoCEv2 GID of an address.
func GIDFromString(t *testing.T, s string) gorxe.GID {
	t.Helper()
	return gorxe.GIDFromAddr(netip.MustParseAddr(s))
}

// The bandwidth reports travel as big-endian integers and big-endian IEEE doubles.
func TestCaptureReports(t *testing.T) {
	runs := perftestRuns(t)
	for _, i := range []int{0, 1, 3} { // write_bw, read_bw, atomic_bw
		var fields [][]byte
		for _, m := range runs[i].side(true) {
			if len(m) == ReportFieldLen {
				fields = append(fields, m)
			}
		}
		require.Len(t, fields, ReportFields, "run %d: %d report fields from the client, want %d", i, len(fields), ReportFields)
		var r Report
		for f, b := range fields {
			require.NoError(t, SetReportField(&r, f, b))
			again := AppendReportField(nil, &r, f)
			assert.Equal(t, b, again, "run %d field %d: re-encoded %x, captured %x", i, f, again, b)
		}
		wantSize := uint64(65536)
		if i == 3 {
			wantSize = 8
		}
		assert.Equal(t, wantSize, r.Size, "run %d: size %d iters %d, want %d and 50", i, r.Size, r.Iters, wantSize)
		assert.Equal(t, uint64(50), r.Iters, "run %d: size %d iters %d, want %d and 50", i, r.Size, r.Iters, wantSize)
		// A virtual machine pair moves these at tens of MB/s; the rate is the average over size.
		assert.Greater(t, r.BWAvg, float64(0), "run %d: implausible report %+v", i, r)
		assert.GreaterOrEqual(t, r.BWPeak, r.BWAvg, "run %d: implausible report %+v", i, r)
		assert.LessOrEqual(t, math.Abs(r.MsgRate-r.BWAvg*bytesPerMB/float64(r.Size)/1e6), 1e-9, "run %d: implausible report %+v", i, r)
	}
	// The write_bw client's report, decoded by hand from the capture.
	var r Report
	_ = SetReportField(&r, 2, []byte{0x40, 0x35, 0x09, 0x04, 0x4d, 0x77, 0xaa, 0x19})
	assert.LessOrEqual(t, math.Abs(r.BWPeak-21.035222), 1e-6, "peak %f, want 21.035222", r.BWPeak)
}

func TestKeyFormat(t *testing.T) {
	d := Dest{LID: 0, OutReads: 0x80, QPN: 0x11, PSN: 0xabcdef, RKey: 0x1234, VAddr: 0x7f0000001000,
		GID: gorxe.GID{0xfe, 0x80, 15: 0x01}, SRQN: 0}
	got := string(AppendKey(nil, &d))
	want := "0000:0080:000011:abcdef:00001234:00007f0000001000:fe:80:00:00:00:00:00:00:00:00:00:00:00:00:00:01:00000000:\x00"
	require.Equal(t, want, got, "got  %q\nwant %q", got, want)
	// Out-of-range values are masked to their field, keeping the message 108 bytes long.
	d.QPN, d.PSN, d.OutReads = 0x1000011, 0x1abcdef, 0x10080
	if got := AppendKey(nil, &d); len(got) != KeyLen || string(got) != want {
		assert.Fail(t, fmt.Sprintf("masked key %q", got))
	}
}

func TestParseKeyErrors(t *testing.T) {
	good := AppendKey(nil, &Dest{QPN: 1, GID: gorxe.GID{15: 1}})
	tests := []struct {
		name string
		msg  []byte
		want string
	}{
		{"short", good[:100], "key message of 100 bytes"},
		{"no-GID form", append([]byte("0000:0001:000024:8acac0:0000065f:00007f5303b1e000:00000000"), make([]byte, 50)...), "has 7 fields"},
		{"not hex", bytes.Replace(good, []byte("000001"), []byte("0000zz"), 1), "not hexadecimal"},
		{"empty field", bytes.Replace(good, []byte("0000:"), []byte(":0000"), 1), "not hexadecimal"},
		{"GID byte", append(bytes.Replace(good[:len(good)-1], []byte(":01:0"), []byte(":1ff:"), 1)[:KeyLen-1], 0), "out of range"},
		{"QPN", bytes.Replace(good[:KeyLen-1], []byte(":000001:"), []byte(":1000001:"), 1), "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseKey(tt.msg)
			assert.ErrorIs(t, err, ErrBadMessage, "error %v, want one line with %q matching ErrBadMessage", err, tt.want)
			assert.Contains(t, err.Error(), tt.want, "error %v, want one line with %q matching ErrBadMessage", err, tt.want)
			assert.NotContains(t, err.Error(), "\n", "error %v, want one line with %q matching ErrBadMessage", err, tt.want)
		})
	}
}

func TestVersion(t *testing.T) {
	got := AppendVersion(nil, Version)
	assert.Equal(t, "6.00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", string(got), "version message %q", got)
	long := AppendVersion(nil, "123456789012345678")
	assert.False(t, len(long) != VersionLen || long[15] != 0, "long version %q is not NUL-terminated in 16 bytes", long)
	tests := []struct {
		in   string
		text string
		num  float64
		ok   bool
	}{
		{"6.06", "6.06", 6.06, true},
		{"5.93-rc1", "5.93-rc1", 5.93, true},
		{"6", "6", 6, true},
		{"", "", 0, false},
		{"done", "done", 0, false},
	}
	for _, tt := range tests {
		text, num, err := ParseVersion(AppendVersion(nil, tt.in))
		assert.Equal(t, tt.text, text, "ParseVersion(%q) = %q, %v, %v", tt.in, text, num, err)
		assert.Equal(t, tt.num, num, "ParseVersion(%q) = %q, %v, %v", tt.in, text, num, err)
		assert.Equal(t, tt.ok, bool((err == nil)), "ParseVersion(%q) = %q, %v, %v", tt.in, text, num, err)
		assert.False(t, err != nil && !errors.Is(err, ErrBadMessage), "ParseVersion(%q): %v does not match ErrBadMessage", tt.in, err)
	}
	// perftest compares versions as C floats.
	assert.True(t, versionAtLeast(5.7, MinPeerVersion), "version comparisons")
	assert.False(t, versionAtLeast(5.69, MinPeerVersion), "version comparisons")
	assert.False(t, versionAtLeast(6.27, negotiateVersion), "version comparisons")
	_, num, _ := ParseVersion(AppendVersion(nil, Version))
	assert.True(t, versionAtLeast(num, MinPeerVersion), "gorxe's version %s must lie in [%.2f, %.2f)", Version, MinPeerVersion, negotiateVersion)
	assert.False(t, versionAtLeast(num, negotiateVersion), "gorxe's version %s must lie in [%.2f, %.2f)", Version, MinPeerVersion, negotiateVersion)
}

func TestMTUMessage(t *testing.T) {
	for m := gorxe.MTU256; m <= gorxe.MTU4096; m++ {
		b := AppendMTU(nil, m)
		got, ok := ParseMTU(b)
		assert.Len(t, b, MTULen, "MTU %v: %q parses to %v %v", m, b, got, ok)
		assert.True(t, ok, "MTU %v: %q parses to %v %v", m, b, got, ok)
		assert.Equal(t, m, got, "MTU %v: %q parses to %v %v", m, b, got, ok)
	}
	for _, bad := range []string{"0\x00", "6\x00", "\x00\x00", "x3", "99"} {
		_, ok := ParseMTU([]byte(bad))
		assert.False(t, ok, "ParseMTU(%q) accepted", bad)
	}
}

func FuzzParseKey(f *testing.F) {
	f.Add(AppendKey(nil, &Dest{QPN: 0x24, PSN: 0x8acac0, RKey: 0x65f, VAddr: 0x7f5303b1e000, GID: gorxe.GID{10: 0xff, 11: 0xff, 12: 10}}))
	f.Add(make([]byte, KeyLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseKey(b)
		if err != nil {
			return
		}
		// Anything accepted re-encodes to a message that parses to the same address.
		d2, err := ParseKey(AppendKey(nil, &d))
		require.NoError(t, err, "%q parsed to %+v, which re-parses to %+v, %v", b, d, d2, err)
		require.Equal(t, d, d2, "%q parsed to %+v, which re-parses to %+v, %v", b, d, d2, err)
	})
}

func FuzzParseVersion(f *testing.F) {
	f.Add(AppendVersion(nil, "6.06"))
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, num, err := ParseVersion(b)
		require.False(t, err == nil && (num < 0 || math.IsNaN(num)), "%q parsed to %v", b, num)
	})
}
