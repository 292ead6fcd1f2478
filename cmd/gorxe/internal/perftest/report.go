package perftest

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// The fixed lines of perftest's output.
const (
	resultLine    = "---------------------------------------------------------------------------------------\n"
	resultFmtMB   = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
	resultFmtGb   = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
	resultFmtLat  = " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
	resultFmtDur  = " #bytes        #iterations       t_avg[usec]    tps average\n"
	waitingBanner = "\n************************************\n* Waiting for client to connect... *\n************************************\n"
)

// Units of a bandwidth report: MB is 2^20 bytes, Gb is 10^9 bits (perftest's --report_gbits).
const (
	bytesPerMB = 0x100000
	bytesPerGb = 125000000
)

// info is what the test header shows besides the parameters.
type info struct {
	device   string
	mtuBytes int
	gidIndex int
	outReads int
}

// writeHeader prints the test header (perftest's ctx_print_test_info).
func writeHeader(w io.Writer, p *Params, in info) {
	var b strings.Builder
	b.WriteString(resultLine)
	b.WriteString("                    ")
	b.WriteString(p.Test.Verb.title() + " ")
	if p.Test.Verb == VerbAtomic {
		b.WriteString(p.AtomicType.String() + " ")
	}
	if p.Test.Kind == BW {
		if p.PostList > 1 {
			b.WriteString("Post List ")
		}
		b.WriteString("BW ")
	} else {
		b.WriteString("Latency ")
	}
	b.WriteString("Test\n")
	if p.Events {
		fmt.Fprintf(&b, " Test with events. Using %s_comp%d\n", in.device, 0)
	}
	fmt.Fprintf(&b, " Dual-port       : %s\t\tDevice         : %s\n", "OFF", in.device)
	fmt.Fprintf(&b, " Number of qps   : %d\t\tTransport type : %s\n", p.NumQPs, "IB")
	fmt.Fprintf(&b, " Connection type : %s\t\tUsing SRQ      : %s\n", p.Conn, "OFF")
	// Lines of perftest builds with relaxed ordering and the ibv_wr_* API, as Debian's: on rxe,
	// which has no ibv_wr_* support, the second says OFF.
	b.WriteString(" PCIe relax order: ON\n")
	b.WriteString(" ibv_wr* API     : OFF\n")
	if !p.IsServer() {
		fmt.Fprintf(&b, " TX depth        : %d\n", p.TxDepth)
	}
	if p.PostList > 1 {
		fmt.Fprintf(&b, " Post List       : %d\n", p.PostList)
	}
	if p.Test.Verb == VerbSend && p.IsServer() {
		fmt.Fprintf(&b, " RX depth        : %d\n", p.RxDepth)
	}
	if p.Test.Kind == BW {
		fmt.Fprintf(&b, " CQ Moderation   : %d\n", p.CQMod)
	}
	fmt.Fprintf(&b, " Mtu             : %d[B]\n", in.mtuBytes)
	b.WriteString(" Link type       : Ethernet\n")
	fmt.Fprintf(&b, " GID index       : %d\n", in.gidIndex)
	if p.Test.Verb == VerbRead || p.Test.Verb == VerbAtomic {
		fmt.Fprintf(&b, " Outstand reads  : %d\n", in.outReads)
	} else {
		fmt.Fprintf(&b, " Max inline data : %d[B]\n", p.Inline)
	}
	fmt.Fprintf(&b, " rdma_cm QPs\t : %s\n", onOff(p.RDMACM))
	fmt.Fprintf(&b, " Data ex. method : %s", exchangeMethod(p))
	if p.RDMACM {
		if p.TOS != defTOS {
			fmt.Fprintf(&b, " \tTOS    : %d", p.TOS)
		}
		if p.IsServer() {
			// perftest prints this after its QPs connected, where it no longer waits for anything.
			b.WriteString("\n" + resultLine + " Waiting for client rdma_cm QP to connect\n")
			b.WriteString(" Please run the same command with the IB/RoCE interface IP")
		}
	}
	b.WriteString("\n" + resultLine)
	io.WriteString(w, b.String())
}

// onOff is how perftest prints a switch.
func onOff(on bool) string {
	if on {
		return "ON"
	}
	return "OFF"
}

// exchangeMethod names how the out-of-band exchange runs, as perftest's header does.
func exchangeMethod(p *Params) string {
	if p.CommRDMACM {
		return "rdma_cm"
	}
	return "Ethernet"
}

// writeDest prints one side's QP address (perftest's ctx_print_pingpong_data): LID, QPN and PSN,
// the outstanding reads of READ tests, the buffer of READ and WRITE tests, and the GID in decimal.
func writeDest(w io.Writer, side string, v Verb, d *Dest) {
	var b strings.Builder
	fmt.Fprintf(&b, " %s address: LID %s QPN %s PSN %s", side, altHex(uint64(d.LID), 4), altHex(uint64(d.QPN), 6), altHex(uint64(d.PSN), 6))
	if v == VerbRead {
		fmt.Fprintf(&b, " OUT %s", altHex(uint64(d.OutReads), 4))
	}
	if v == VerbRead || v == VerbWrite {
		fmt.Fprintf(&b, " RKey %s VAddr %s", altHex(uint64(d.RKey), 8), altHex(d.VAddr, 16))
	}
	b.WriteString("\n GID: ")
	for i, x := range d.GID {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02d", x)
	}
	b.WriteByte('\n')
	io.WriteString(w, b.String())
}

// altHex formats v as C's "%#0<width>x": zero-padded to width characters including the 0x
// prefix, which C leaves out for zero.
func altHex(v uint64, width int) string {
	if v == 0 {
		return strings.Repeat("0", width)
	}
	h := fmt.Sprintf("%x", v)
	if n := width - 2 - len(h); n > 0 {
		h = strings.Repeat("0", n) + h
	}
	return "0x" + h
}

// writeResultHeader prints the line above the results.
func writeResultHeader(w io.Writer, p *Params) {
	switch {
	case p.Test.Kind == Lat && p.Duration > 0:
		io.WriteString(w, resultLine+resultFmtDur)
	case p.Test.Kind == Lat:
		io.WriteString(w, resultLine+resultFmtLat)
	case p.ReportGbits:
		io.WriteString(w, resultLine+resultFmtGb)
	default:
		io.WriteString(w, resultLine+resultFmtMB)
	}
}

// bwSamples are the timestamps of a bandwidth run, in nanoseconds from an arbitrary origin, with
// 0 meaning "not recorded": posted[i] when work request i was posted, completed[j] when the
// completion covering request j arrived (perftest's tposted and tcompleted).
type bwSamples struct {
	posted, completed []int64
}

// bwReport computes a bandwidth report (perftest's print_report_bw). n counts the messages
// (iterations times QPs); the peak is the best rate over any run of consecutive messages that
// ends at a completion; the average is over the whole run.
func bwReport(s *bwSamples, size, n, postList, cqMod int, noPeak, gbits bool) Report {
	factor := float64(bytesPerMB)
	if gbits {
		factor = bytesPerGb
	}
	r := Report{Size: uint64(size), Iters: uint64(n)}
	last := n - 1
	if noPeak {
		last = 0
	}
	total := s.completed[last] - s.posted[0]
	if total <= 0 {
		total = 1
	}
	sec := float64(total) / 1e9
	r.BWAvg = float64(size) * float64(n) / sec / factor
	r.MsgRate = float64(n) / sec / 1e6
	if noPeak {
		return r
	}
	best := int64(math.MaxInt64)
	consider := func(i, j int) {
		if s.completed[j] == 0 || s.posted[i] == 0 {
			return
		}
		if t := (s.completed[j] - s.posted[i]) / int64(j-i+1); t < best && t > 0 {
			best = t
		}
	}
	consider(0, 0)
	for i := 0; i < n; i += postList {
		for j := (i+cqMod)/cqMod*cqMod - 1; j < n; j += cqMod {
			consider(i, j)
		}
		if n%cqMod != 0 {
			consider(i, n-1)
		}
	}
	if best == math.MaxInt64 {
		return r
	}
	r.BWPeak = float64(size) * 1e9 / float64(best) / factor
	return r
}

// peakAffordable says whether the peak search of n messages is cheap enough to run; perftest
// stops searching above 20000 iterations, gorxe also when many QPs multiply them.
func peakAffordable(n, postList, cqMod int) bool {
	return float64(n)/float64(postList)*float64(n)/float64(cqMod)/2 < 4e8
}

// writeBW prints a bandwidth report line (perftest's print_full_bw_report), or the single number
// --output asks for.
func writeBW(w io.Writer, p *Params, r *Report) {
	switch p.Output {
	case "bandwidth":
		fmt.Fprintf(w, "%f\n", r.BWAvg)
		return
	case "message_rate":
		fmt.Fprintf(w, "%f\n", r.MsgRate)
		return
	}
	if r.BWAvg < 0.1 && p.ReportGbits {
		fmt.Fprintf(w, " %-7d    %d           %-7.6f            %-7.6f            %-7.6f\n", r.Size, r.Iters, r.BWPeak, r.BWAvg, r.MsgRate)
		return
	}
	fmt.Fprintf(w, " %-7d    %-10d       %-7.2f            %-7.2f\t\t   %-7.6f\n", r.Size, r.Iters, r.BWPeak, r.BWAvg, r.MsgRate)
}

// latTail is how many of the slowest samples perftest drops before its statistics.
const latTail = 2

// latStats are the statistics of a latency run, in microseconds.
type latStats struct {
	min, max, typical, avg, stdev, p99, p999 float64
}

// latReport computes latency statistics (perftest's print_report_lat) from the times at which
// the iterations started: each sample is the gap between consecutive starts, divided by rtt
// (2 for ping-pong tests, which time a round trip, 1 for READ and atomics). sorted receives the
// samples in microseconds after sorting, for --report-histogrm.
func latReport(starts []int64, rtt int) (latStats, []float64, []float64) {
	n := len(starts) - 1
	if n < 1 {
		return latStats{}, nil, nil
	}
	delta := make([]int64, n)
	for i := range delta {
		delta[i] = starts[i+1] - starts[i]
	}
	us := func(d int64) float64 { return float64(d) / 1000 / float64(rtt) }
	unsorted := make([]float64, n)
	for i, d := range delta {
		unsorted[i] = us(d)
	}
	slices.Sort(delta)
	m := n - latTail
	if m < 1 {
		m = 1
	}
	var median int64
	if (m-1)%2 != 0 {
		median = (delta[m/2] + delta[m/2-1]) / 2
	} else {
		median = delta[m/2]
	}
	var sum float64
	for _, d := range delta[:m] {
		sum += us(d)
	}
	avg := sum / float64(m)
	var sq float64
	for _, d := range delta[:m] {
		sq += (avg - us(d)) * (avg - us(d))
	}
	at := func(i int) float64 { return us(delta[min(i, n-1)]) }
	st := latStats{
		min: us(delta[0]), max: at(m), typical: us(median), avg: avg,
		stdev: math.Sqrt(sq / float64(m)),
		p99:   at(int(math.Ceil(float64(m) * 0.99))), p999: at(int(math.Ceil(float64(m) * 0.999))),
	}
	sorted := make([]float64, m)
	for i, d := range delta[:m] {
		sorted[i] = us(d)
	}
	return st, unsorted, sorted
}

// writeLat prints a latency report line (perftest's print_report_lat).
func writeLat(w io.Writer, p *Params, size, iters int, st *latStats) {
	if p.Output == "latency" {
		fmt.Fprintf(w, "%f\n", st.avg)
		return
	}
	fmt.Fprintf(w, " %-7d %d          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
		size, iters, st.min, st.max, st.typical, st.avg, st.stdev, st.p99, st.p999)
}

// writeSamples prints every sample, as perftest's -U (unsorted) and -H (sorted) do, followed by
// the result header again.
func writeSamples(w io.Writer, samples []float64) {
	var b strings.Builder
	b.WriteString("#, usec\n")
	for i, s := range samples {
		fmt.Fprintf(&b, "%d, %g\n", i+1, s)
	}
	io.WriteString(w, b.String())
}

// writeLatDuration prints the result of a timed latency run (perftest's
// print_report_lat_duration): the average latency and the iterations per second.
func writeLatDuration(w io.Writer, p *Params, size, iters int, elapsed time.Duration, rtt int) {
	lat, tps := latDurationStats(iters, elapsed, rtt)
	if p.Output == "latency" {
		fmt.Fprintf(w, "%f\n", lat)
		return
	}
	fmt.Fprintf(w, " %-7d       %d            %-7.2f        %-7.2f\n", size, iters, lat, tps)
}

// latDurationStats returns the average latency in microseconds and the iterations per second of
// a timed latency run.
func latDurationStats(iters int, elapsed time.Duration, rtt int) (lat, tps float64) {
	us := float64(elapsed) / 1e3
	return us / float64(rtt) / float64(max(iters, 1)), float64(iters) / elapsed.Seconds()
}
