package perftest

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// altHex must print what C's "%#0<width>x" prints.
func TestAltHex(t *testing.T) {
	tests := []struct {
		v     uint64
		width int
		want  string
	}{
		{0, 4, "0000"}, {1, 4, "0x01"}, {0x80, 4, "0x80"}, {0x10107, 6, "0x10107"}, {0x15, 6, "0x0015"},
		{0x542d8e, 6, "0x542d8e"}, {0xb5554, 6, "0xb5554"}, {0x203d00, 8, "0x203d00"}, {0x10011b4e, 8, "0x10011b4e"},
		{0x7fbd7d593000, 16, "0x007fbd7d593000"}, {0, 16, "0000000000000000"},
	}
	for _, tt := range tests {
		got := altHex(tt.v, tt.width)
		assert.Equal(t, tt.want, got, "altHex(%#x, %d) = %q, want %q", tt.v, tt.width, got, tt.want)
	}
}

// Address lines as perftest prints them (the lines below come from ib_write_bw and ib_send_bw
// runs on mlx5 and rxe).
func TestWriteDest(t *testing.T) {
	gid := GIDFromString(t, "172.31.1.1")
	var b strings.Builder
	writeDest(&b, "local", VerbWrite, &Dest{QPN: 0x23b, PSN: 0xcf95c6, RKey: 0x203d00, VAddr: 0x7fbd7d593000, GID: gid})
	writeDest(&b, "remote", VerbSend, &Dest{QPN: 0x16, PSN: 0xa2a3de, RKey: 0x1234, GID: GIDFromString(t, "192.168.65.3")})
	writeDest(&b, "local", VerbRead, &Dest{QPN: 0x25, PSN: 0xa0dbe7, OutReads: 128, RKey: 0x7cf, VAddr: 0x7f22cd338000, GID: gid})
	writeDest(&b, "local", VerbAtomic, &Dest{QPN: 0x27, PSN: 0x842325, OutReads: 128, RKey: 0x9ff, VAddr: 1, GID: gid})
	want := ` local address: LID 0000 QPN 0x023b PSN 0xcf95c6 RKey 0x203d00 VAddr 0x007fbd7d593000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:172:31:01:01
 remote address: LID 0000 QPN 0x0016 PSN 0xa2a3de
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:65:03
 local address: LID 0000 QPN 0x0025 PSN 0xa0dbe7 OUT 0x80 RKey 0x0007cf VAddr 0x007f22cd338000
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:172:31:01:01
 local address: LID 0000 QPN 0x0027 PSN 0x842325
 GID: 00:00:00:00:00:00:00:00:00:00:255:255:172:31:01:01
`
	assert.Equal(t, want, b.String(), "got\n%s\nwant\n%s", b.String(), want)
}

func TestHeaderVariants(t *testing.T) {
	head := func(test Test, args string) string {
		p, err := ParseArgs(test, strings.Fields(args))
		require.NoError(t, err)
		var b strings.Builder
		writeHeader(&b, p, info{device: "gorxe_lo", mtuBytes: 4096, gidIndex: 1, outReads: 128})
		return b.String()
	}
	for _, tt := range []struct {
		test     Test
		args     string
		has, not []string
	}{
		{Test{VerbWrite, BW}, "-l 4 -s 64 host", []string{"RDMA_Write Post List BW Test", " Post List       : 4\n", " TX depth        : 128\n", " CQ Moderation   : 4\n"}, []string{"RX depth"}},
		{Test{VerbSend, BW}, "-e", []string{" Test with events. Using gorxe_lo_comp0\n", " RX depth        : 512\n"}, []string{"TX depth"}},
		{Test{VerbAtomic, Lat}, "-A CMP_AND_SWAP host", []string{"Atomic CMP_AND_SWAP Latency Test", " Outstand reads  : 128\n"}, []string{"CQ Moderation", "Max inline"}},
		{Test{VerbSend, BW}, "-c UD -q 2 host", []string{" Number of qps   : 2\t\tTransport type : IB\n", " Connection type : UD\t\tUsing SRQ      : OFF\n"}, nil},
	} {
		got := head(tt.test, tt.args)
		for _, s := range tt.has {
			assert.Contains(t, got, s, "%s %s: header lacks %q:\n%s", tt.test.Name(), tt.args, s, got)
		}
		for _, s := range tt.not {
			assert.NotContains(t, got, s, "%s %s: header has %q:\n%s", tt.test.Name(), tt.args, s, got)
		}
	}
}

func TestWriteBW(t *testing.T) {
	p := &Params{}
	r := &Report{Size: 65536, Iters: 5000, BWPeak: 11234.5678, BWAvg: 11001.25, MsgRate: 0.176}
	var b strings.Builder
	writeBW(&b, p, r)
	want := " 65536      5000             11234.57            11001.25\t\t   0.176000\n"
	assert.Equal(t, want, b.String(), "got %q, want %q", b.String(), want)
	// Below 0.1 Gb/s perftest switches to six decimals.
	b.Reset()
	writeBW(&b, &Params{ReportGbits: true}, &Report{Size: 8, Iters: 50, BWPeak: 0.05, BWAvg: 0.04, MsgRate: 0.62})
	want = " 8          50           0.050000            0.040000            0.620000\n"
	assert.Equal(t, want, b.String(), "got %q, want %q", b.String(), want)
	for out, want := range map[string]string{"bandwidth": "11001.250000\n", "message_rate": "0.176000\n"} {
		b.Reset()
		writeBW(&b, &Params{Output: out}, r)
		assert.Equal(t, want, b.String(), "--output=%s: got %q, want %q", out, b.String(), want)
	}
}

func TestBWReport(t *testing.T) {
	// Eight 1 MB messages, one every 10 ms, each completing 10 ms after its post, signaled every
	// second message: the average over 90 ms and the peak at one message per 10 ms.
	s := bwSamples{posted: make([]int64, 8), completed: make([]int64, 8)}
	for i := range 8 {
		s.posted[i] = int64(i)*10e6 + 1
		if i%2 == 1 {
			s.completed[i] = int64(i)*10e6 + 10e6 + 1
		}
	}
	r := bwReport(&s, 1<<20, 8, 1, 2, false, false)
	assert.Equal(t, uint64(1<<20), r.Size, "got %+v", r)
	assert.Equal(t, uint64(8), r.Iters, "got %+v", r)
	assert.True(t, near(r.BWAvg, 8/0.08), "got %+v", r)
	assert.True(t, near(r.MsgRate, 8/0.08/1e6), "got %+v", r)
	assert.True(t, near(r.BWPeak, 100), "got %+v", r)
	r = bwReport(&s, 1<<20, 8, 1, 2, false, true)
	assert.True(t, near(r.BWAvg, 8*(1<<20)/0.08/bytesPerGb), "Gb/s average %v", r.BWAvg)
	// Without the peak: first post to the one completion timestamp.
	np := bwSamples{posted: []int64{1}, completed: []int64{50e6 + 1}}
	r = bwReport(&np, 1000, 10, 1, 1, true, false)
	assert.Equal(t, float64(0), r.BWPeak, "no peak: %+v", r)
	assert.True(t, near(r.BWAvg, 10*1000/0.05/bytesPerMB), "no peak: %+v", r)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestLatReport(t *testing.T) {
	// 13 iterations: 12 samples of 10 µs except two slow ones (50 µs, 30 µs), which perftest's
	// statistics drop as its "tail".
	starts := []int64{0}
	for _, d := range []int64{10, 10, 50, 10, 12, 10, 10, 8, 30, 10, 10, 10} {
		starts = append(starts, starts[len(starts)-1]+d*1000)
	}
	st, unsorted, sorted := latReport(starts, 1)
	require.Len(t, unsorted, 12, "samples %v %v", unsorted, sorted)
	require.Equal(t, float64(50), unsorted[2], "samples %v %v", unsorted, sorted)
	require.Len(t, sorted, 10, "samples %v %v", unsorted, sorted)
	require.Equal(t, float64(8), sorted[0], "samples %v %v", unsorted, sorted)
	require.Equal(t, float64(12), sorted[9], "samples %v %v", unsorted, sorted)
	want := latStats{min: 8, max: 30, typical: 10, avg: 10, stdev: math.Sqrt(0.8), p99: 30, p999: 30}
	assert.True(t, near(st.min, want.min), "got %+v, want %+v", st, want)
	assert.True(t, near(st.max, want.max), "got %+v, want %+v", st, want)
	assert.True(t, near(st.typical, want.typical), "got %+v, want %+v", st, want)
	assert.True(t, near(st.avg, want.avg), "got %+v, want %+v", st, want)
	assert.True(t, near(st.stdev, want.stdev), "got %+v, want %+v", st, want)
	assert.True(t, near(st.p99, want.p99), "got %+v, want %+v", st, want)
	assert.True(t, near(st.p999, want.p999), "got %+v, want %+v", st, want)
	// Round-trip tests halve every sample.
	st2, _, _ := latReport(starts, 2)
	assert.True(t, near(st2.avg, 5), "rtt 2: %+v", st2)
	assert.True(t, near(st2.min, 4), "rtt 2: %+v", st2)
	var b strings.Builder
	writeLat(&b, &Params{}, 2, 13, &st)
	if want := " 2       13          8.00           30.00        10.00    \t       10.00       \t0.89   \t\t30.00   \t\t30.00  \n"; b.String() != want {
		assert.Fail(t, fmt.Sprintf("got %q, want %q", b.String(), want))
	}
	b.Reset()
	writeLat(&b, &Params{Output: "latency"}, 2, 13, &st)
	assert.Equal(t, "10.000000\n", b.String(), "--output=latency: %q", b.String())
	b.Reset()
	writeLatDuration(&b, &Params{}, 64, 1000, 20*time.Millisecond, 2)
	if want := " 64            1000            10.00          50000.00\n"; b.String() != want {
		assert.Fail(t, fmt.Sprintf("duration: got %q, want %q", b.String(), want))
	}
}

func TestCycle(t *testing.T) {
	c := newCycle(1500, 4096, 64)
	var ends []int
	for k := range 5 {
		ends = append(ends, c.offset(k)+1500)
	}
	// perftest wraps after cycle/step messages, so no message crosses the cycle buffer.
	assert.False(t, c.step != 1536 || c.slots != 2 || ends[0] != 1500 || ends[1] != 3036 || ends[2] != 1500, "cycle %+v, ends %v", c, ends)
	if c := newCycle(3, 4096, 64); c.step != 64 || c.slots != 64 || c.offset(64) != 0 || c.offset(63) != 4032 {
		assert.Fail(t, fmt.Sprintf("small messages: %+v", c))
	}
	if c := newCycle(4096, 4096, 64); c.offset(7) != 0 {
		assert.Fail(t, fmt.Sprintf("large messages move: %+v", c))
	}
}
