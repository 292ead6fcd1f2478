package perftest

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// defJSONFile is where --out_json writes without --out_json_file: perftest's default, in the
// working directory.
const defJSONFile = "perftest_out.json"

// jsonReport is the text of perftest's --out_json file: the test's parameters (what the header
// shows) and one result. perftest writes it line by line rather than through a JSON encoder, and
// tools that read it may depend on its key order and number formats, so gorxe writes the same
// text. One difference: with --output=bandwidth or message_rate perftest leaves a comma after the
// single number, which makes the file invalid JSON; gorxe leaves it out.
func jsonReport(p *Params, in info, results string) string {
	var b strings.Builder
	b.WriteString("{\n\"test_info\": {\n")
	b.WriteString("\"test\": \"" + p.Test.Verb.title() + "_")
	if p.Test.Verb == VerbAtomic {
		b.WriteString(p.AtomicType.String() + "_")
	}
	if p.Test.Kind == BW {
		if p.PostList > 1 {
			b.WriteString("Post_List_")
		}
		b.WriteString("BW_")
	} else {
		b.WriteString("Latency_")
	}
	b.WriteString("Test\",\n")
	if p.Events {
		fmt.Fprintf(&b, "\"Test with events\": \"Using_%s_comp%d\",\n", in.device, 0)
	}
	fmt.Fprintf(&b, "\"Dual_port\": \"%s\",\n\"Device\": \"%s\",\n", "OFF", in.device)
	fmt.Fprintf(&b, "\"Number_of_qps\": %d,\n\"Transport_type\": \"%s\",\n", p.NumQPs, "IB")
	fmt.Fprintf(&b, "\"Connection_type\": \"%s\",\n\"Using_SRQ\": \"%s\",\n", p.Conn, "OFF")
	// As the header: a build with relaxed ordering, and no ibv_wr_* API on rxe.
	b.WriteString("\"PCIe_relax_order\": \"ON\",\n")
	b.WriteString("\"ibv_wr_API\": \"OFF\",\n")
	if !p.IsServer() {
		fmt.Fprintf(&b, "\"TX_depth\": %d,\n", p.TxDepth)
	}
	if p.PostList > 1 {
		fmt.Fprintf(&b, "\"Post_List\": %d,\n", p.PostList)
	}
	if p.Test.Verb == VerbSend && p.IsServer() {
		fmt.Fprintf(&b, "\"RX_depth\": %d,\n", p.RxDepth)
	}
	if p.Test.Kind == BW {
		fmt.Fprintf(&b, "\"CQ_Moderation\": %d,\n", p.CQMod)
	}
	fmt.Fprintf(&b, "\"Mtu\": %d,\n", in.mtuBytes)
	b.WriteString("\"Link_type\": \"Ethernet\",\n")
	fmt.Fprintf(&b, "\"GID_index\": %d,\n", in.gidIndex)
	if p.Test.Verb == VerbRead || p.Test.Verb == VerbAtomic {
		fmt.Fprintf(&b, "\"Outstand_reads\": %d,\n", in.outReads)
	} else {
		fmt.Fprintf(&b, "\"Max_inline_data\": %d,\n", p.Inline)
	}
	fmt.Fprintf(&b, "\"rdma_cm_QPs\": \"%s\",\n", onOff(p.RDMACM))
	b.WriteString("\"Use_ROCm_memory\": \"OFF\",\n")
	fmt.Fprintf(&b, "\"Data_ex_method\": \"%s\"", exchangeMethod(p))
	if p.RDMACM && p.TOS != defTOS {
		fmt.Fprintf(&b, ",\n\"TOS\": %d", p.TOS)
	}
	b.WriteString("\n},\n")
	b.WriteString("\"results\": {\n")
	b.WriteString(results)
	b.WriteString("}\n}\n")
	return b.String()
}

// bwJSON is the results of a bandwidth report, as writeBW prints them.
func bwJSON(p *Params, r *Report) string {
	switch p.Output {
	case "bandwidth":
		return fmt.Sprintf("\"bw_avg\": %f\n", r.BWAvg)
	case "message_rate":
		return fmt.Sprintf("\"msgRate_avg\": %f\n", r.MsgRate)
	}
	f := "%.2f"
	if r.BWAvg < 0.1 && p.ReportGbits {
		f = "%.6f"
	}
	return fmt.Sprintf("\"MsgSize\": %d,\n\"n_iterations\": %d,\n\"BW_peak\": "+f+",\n\"BW_average\": "+f+",\n\"MsgRate\": %.6f\n",
		r.Size, r.Iters, r.BWPeak, r.BWAvg, r.MsgRate)
}

// latJSON is the results of a latency report, as writeLat prints them.
func latJSON(p *Params, size, iters int, st *latStats) string {
	if p.Output == "latency" {
		return fmt.Sprintf("\"avg_lat\": %f\n", st.avg)
	}
	return fmt.Sprintf("\"MsgSize\": %d,\n\"n_iterations\": %d,\n\"t_min\": %.2f,\n\"t_max\": %.2f,\n\"t_typical\": %.2f,\n\"t_avg\": %.2f,\n\"t_stdev\": %.2f,\n\"percentile_99\": %.2f,\n\"percentile_99.9\": %.2f\n",
		size, iters, st.min, st.max, st.typical, st.avg, st.stdev, st.p99, st.p999)
}

// latDurationJSON is the results of a timed latency run, as writeLatDuration prints them.
func latDurationJSON(p *Params, size, iters int, elapsed time.Duration, rtt int) string {
	lat, tps := latDurationStats(iters, elapsed, rtt)
	if p.Output == "latency" {
		return fmt.Sprintf("\"t_avg\": %f\n", lat)
	}
	return fmt.Sprintf("\"MsgSize\": %d,\n\"n_iterations\": %d,\n\"t_avg\": %.2f,\n\"tps_average\": %.2f\n", size, iters, lat, tps)
}

// saveJSON writes a result to the --out_json file, replacing what the previous result of the run
// wrote there (perftest truncates it for every result, so with -a the last size remains). Like
// perftest, a file that cannot be written is reported and the run goes on.
func (f *flow) saveJSON(results string) {
	if !f.p.OutJSON {
		return
	}
	name := f.p.OutJSONFile
	if err := os.WriteFile(name, []byte(jsonReport(f.p, f.in, results)), 0o600); err != nil {
		f.warn(fmt.Sprintf("failed to open %s: %v", name, err))
	}
}
