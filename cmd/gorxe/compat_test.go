package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cTool is the command line of a C tool gorxe stands in for, as its source declares it: the
// getopt string and the long options (name and whether it takes an argument).
type cTool struct {
	name   string   // the C tool
	gorxe  []string // the gorxe commands that stand in for it
	getopt string
	long   []cLong
}

type cLong struct {
	name string
	arg  bool
}

// pingpongLong are the long options every ibv_*_pingpong of rdma-core v44 declares.
var pingpongLong = []cLong{{"port", true}, {"ib-dev", true}, {"ib-port", true}, {"size", true}, {"rx-depth", true},
	{"iters", true}, {"sl", true}, {"events", false}, {"gid-idx", true}, {"chk", false}}

// perftestLong are perftest 4.5's long options (perftest_parameters.c), those behind build
// options included.
var perftestLong = []cLong{{"port", true}, {"ib-dev", true}, {"ib-port", true}, {"mtu", true}, {"size", true},
	{"iters", true}, {"tx-depth", true}, {"qp-timeout", true}, {"sl", true}, {"gid-index", true}, {"all", false},
	{"CPU-freq", false}, {"connection", true}, {"qp", true}, {"events", false}, {"vector", true}, {"inline_size", true},
	{"outs", true}, {"mcg", false}, {"comm_rdma_cm", false}, {"rdma_cm", false}, {"tos", true}, {"hop_limit", true},
	{"help", false}, {"MGID", true}, {"rx-depth", true}, {"bidirectional", false}, {"cq-mod", true}, {"noPeak", false},
	{"version", false}, {"report-cycles", false}, {"report-histogrm", false}, {"report-unsorted", false},
	{"atomic_type", true}, {"dualport", false}, {"post_list", true}, {"duration", true}, {"margin", true},
	{"source_mac", true}, {"dest_mac", true}, {"dest_ip", true}, {"source_ip", true}, {"dest_port", true},
	{"source_port", true}, {"ethertype", true}, {"limit_bw", true}, {"limit_msgrate", true}, {"server", false},
	{"client", false}, {"mac_fwd", false}, {"use_rss", false}, {"report-counters", true}, {"force-link", true},
	{"remote_mac", true}, {"local_mac", true}, {"remote_ip", true}, {"local_ip", true}, {"remote_port", true},
	{"local_port", true}, {"run_infinitely", false}, {"report_gbits", false}, {"use-srq", false},
	{"report-both", false}, {"reversed", false}, {"pkey_index", true}, {"tcp", false}, {"burst_size", true},
	{"typical_pkt_size", true}, {"rate_limit", true}, {"rate_limit_type", true}, {"rate_units", true},
	{"output", true}, {"cpu_util", false}, {"out_json", false}, {"out_json_file", true}, {"latency_gap", true},
	{"flow_label", true}, {"retry_count", true}, {"dont_xchg_versions", false}, {"payload_file_path", true},
	{"use_cuda", true}, {"use_cuda_bus_id", true}, {"use_cuda_dmabuf", false}, {"use_rocm", true}, {"mmap", true},
	{"mmap-offset", true}, {"ipv6", false}, {"raw_ipv6", false}, {"report-per-port", false}, {"odp", false},
	{"use_hugepages", false}, {"use_old_post_send", false}, {"promiscuous", false}, {"sniffer", false},
	{"raw_mcast", false}, {"mr_per_qp", false}, {"dlid", true}, {"tclass", true}, {"wait_destroy", true},
	{"flows", true}, {"flows_burst", true}, {"reply_every", true}, {"perform_warm_up", false}, {"vlan_en", false},
	{"vlan_pcp", true}, {"recv_post_list", true}, {"aes_xts", false}, {"encrypt_on_tx", false},
	{"sig_before", false}, {"aes_block_size", true}, {"kek_path", true}, {"credentials_path", true},
	{"data_enc_keys_number", true}, {"data_enc_key_app_path", true}, {"log_dci_streams", true},
	{"log_active_dci_streams", true}, {"disable_pcie_relaxed", false}, {"use_ooo", false}}

// cTools are the drop-ins' C tools: rdma-core v44's librdmacm examples and libibverbs examples,
// and perftest 4.5.
var cTools = []cTool{
	{"rping", []string{"rping"}, "a:I:Pp:C:S:t:scvVdq", nil},
	{"ucmatose", []string{"ucmatose"}, "s:b:f:P:c:C:S:t:p:a:m", nil},
	{"udaddy", []string{"udaddy"}, "s:b:c:C:S:t:p:P:f:", nil},
	{"mckey", []string{"mckey"}, "m:M:sb:c:C:S:p:ol", nil},
	{"rdma_server", []string{"rdma_server"}, "s:p:", nil},
	{"rdma_client", []string{"rdma_client"}, "s:p:", nil},
	{"ibv_rc_pingpong", []string{"rc_pingpong"}, "p:d:i:s:m:r:n:l:eg:oOPtcjN",
		append([]cLong{{"mtu", true}, {"odp", false}, {"iodp", false}, {"prefetch", false}, {"ts", false}, {"dm", false}, {"new_send", false}}, pingpongLong...)},
	{"ibv_uc_pingpong", []string{"uc_pingpong"}, "p:d:i:s:m:r:n:l:eg:c", append([]cLong{{"mtu", true}}, pingpongLong...)},
	{"ibv_ud_pingpong", []string{"ud_pingpong"}, "p:d:i:s:r:n:l:eg:c", pingpongLong},
	{"ibv_srq_pingpong", []string{"srq_pingpong"}, "p:d:i:s:m:q:r:n:l:eog:c",
		append([]cLong{{"mtu", true}, {"num-qp", true}, {"odp", false}}, pingpongLong...)},
	{"ibv_devinfo", []string{"devinfo"}, "d:i:lv", []cLong{{"ib-dev", true}, {"ib-port", true}, {"list", false}, {"verbose", false}}},
	{"perftest", []string{"write_bw", "read_bw", "send_bw", "atomic_bw", "write_lat", "read_lat", "send_lat", "atomic_lat"},
		"w:y:p:d:i:m:s:n:t:u:S:x:c:q:I:o:M:r:Q:A:l:D:f:B:T:L:E:J:j:K:k:X:W:aFegzRvhbNVCHUOZP", perftestLong},
}

// notAccepted are the getopt errors of an option the tool does not know, or knows with or
// without an argument where the C tool does the opposite.
var notAccepted = []string{"invalid option", "unrecognized option", "requires an argument", "doesn't allow an argument", "is ambiguous"}

// TestDropInsAcceptTheCCommandLine parses every option of each C tool with the gorxe command
// that stands in for it: each must be known, with an argument exactly when the C tool takes one.
// A value may still be refused (out of range, or an option gorxe says it does not support).
// An option with an argument is given it attached (-x1, --name=1), so that a flag taken for an
// option with an argument, or the reverse, fails to parse.
func TestDropInsAcceptTheCCommandLine(t *testing.T) {
	for _, ct := range cTools {
		var lines [][]string
		g := ct.getopt
		for i := 0; i < len(g); i++ {
			if i+1 < len(g) && g[i+1] == ':' {
				lines = append(lines, []string{"-" + string(g[i]) + "1"})
				i++
				continue
			}
			lines = append(lines, []string{"-" + string(g[i])})
		}
		for _, l := range ct.long {
			if l.arg {
				lines = append(lines, []string{"--" + l.name + "=1"})
			} else {
				lines = append(lines, []string{"--" + l.name})
			}
		}
		for _, name := range ct.gorxe {
			c, ok := lookup(name)
			require.True(t, ok, name)
			for _, args := range lines {
				_, err := c.Parse(args)
				if err == nil {
					continue
				}
				for _, bad := range notAccepted {
					assert.NotContains(t, err.Error(), bad, "gorxe %s %s (%s's option)", name, strings.Join(args, " "), ct.name)
				}
			}
		}
	}
}

// TestRdmaServerTakesS: rdma_server -s ADDR -p PORT, as a script for the C server writes it.
func TestRdmaServerTakesS(t *testing.T) {
	c, ok := lookup("rdma_server")
	require.True(t, ok)
	_, err := c.Parse([]string{"-s", "127.0.0.1", "-p", "7471"})
	assert.NoError(t, err)
}
