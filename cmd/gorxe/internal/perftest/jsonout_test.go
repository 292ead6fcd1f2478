package perftest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonFiles runs both sides of a test with --out_json, each writing its own file, and returns
// the client's file and the server's.
func jsonFiles(t *testing.T, test Test, args ...string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cli, srv := filepath.Join(dir, "client.json"), filepath.Join(dir, "server.json")
	runPair(t, test, append(args, "--out_json"), func(p *Params) {
		p.OutJSONFile = cli
		if p.IsServer() {
			p.OutJSONFile = srv
		}
	})
	return cli, srv
}

func readJSON(t *testing.T, name string) (string, map[string]map[string]any) {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	var doc map[string]map[string]any
	require.NoError(t, json.Unmarshal(b, &doc), "not JSON:\n%s", b)
	return string(b), doc
}

// TestOutJSONText pins the whole file of a write_bw client: perftest's keys, order and number
// formats.
func TestOutJSONText(t *testing.T) {
	cli, _ := jsonFiles(t, Test{VerbWrite, BW}, "-n", "5", "-s", "2")
	text, _ := readJSON(t, cli)
	assert.Equal(t, `{
"test_info": {
"test": "RDMA_Write_BW_Test",
"Dual_port": "OFF",
"Device": "gorxe_test",
"Number_of_qps": 1,
"Transport_type": "IB",
"Connection_type": "RC",
"Using_SRQ": "OFF",
"PCIe_relax_order": "ON",
"ibv_wr_API": "OFF",
"TX_depth": 5,
"CQ_Moderation": 5,
"Mtu": 1024,
"Link_type": "Ethernet",
"GID_index": 1,
"Max_inline_data": 0,
"rdma_cm_QPs": "OFF",
"Use_ROCm_memory": "OFF",
"Data_ex_method": "Ethernet"
},
"results": {
"MsgSize": 2,
"n_iterations": 5,
"BW_peak": 1.00,
"BW_average": 1.00,
"MsgRate": 1.000000
}
}
`, text)
}

func TestOutJSONFields(t *testing.T) {
	tests := []struct {
		name     string
		test     Test
		args     []string
		testName string
		// results are the client's; the server's has the same when it prints a result.
		results    map[string]any
		serverFile bool
		serverOnly []string // test_info keys only the server writes
		clientOnly []string
	}{
		{"write_bw", Test{VerbWrite, BW}, []string{"-n", "5", "-s", "2"}, "RDMA_Write_BW_Test",
			map[string]any{"MsgSize": 2.0, "n_iterations": 5.0, "BW_peak": 1.0, "BW_average": 1.0, "MsgRate": 1.0},
			true, nil, []string{"TX_depth"}},
		{"send_bw post list", Test{VerbSend, BW}, []string{"-n", "5", "-s", "2", "-l", "2"}, "Send_Post_List_BW_Test",
			map[string]any{"MsgSize": 2.0, "n_iterations": 5.0, "BW_peak": 1.0, "BW_average": 1.0, "MsgRate": 1.0},
			true, []string{"RX_depth"}, []string{"TX_depth"}},
		{"atomic_bw", Test{VerbAtomic, BW}, []string{"-n", "5", "-A", "CMP_AND_SWAP"}, "Atomic_CMP_AND_SWAP_BW_Test",
			map[string]any{"MsgSize": 2.0, "n_iterations": 5.0, "BW_peak": 1.0, "BW_average": 1.0, "MsgRate": 1.0},
			true, nil, []string{"TX_depth"}},
		{"bandwidth only", Test{VerbWrite, BW}, []string{"-n", "5", "--output=bandwidth"}, "RDMA_Write_BW_Test",
			map[string]any{"bw_avg": 1.0}, true, nil, []string{"TX_depth"}},
		{"send_lat", Test{VerbSend, Lat}, []string{"-n", "5", "-s", "2"}, "Send_Latency_Test",
			map[string]any{"MsgSize": 2.0, "n_iterations": 5.0, "t_min": 2.5, "t_max": 2.5, "t_typical": 2.5,
				"t_avg": 2.5, "t_stdev": 0.0, "percentile_99": 2.5, "percentile_99.9": 2.5},
			true, []string{"RX_depth"}, []string{"TX_depth"}},
		{"read_lat", Test{VerbRead, Lat}, []string{"-n", "5", "-s", "2", "--output=latency"}, "RDMA_Read_Latency_Test",
			map[string]any{"avg_lat": 5.0}, false, nil, []string{"TX_depth"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cli, srv := jsonFiles(t, tt.test, tt.args...)
			_, doc := readJSON(t, cli)
			info := doc["test_info"]
			assert.Equal(t, tt.testName, info["test"])
			assert.Equal(t, "gorxe_test", info["Device"])
			assert.Equal(t, 1024.0, info["Mtu"])
			assert.Equal(t, tt.results, doc["results"])
			for _, k := range tt.clientOnly {
				assert.Contains(t, info, k)
			}
			for _, k := range tt.serverOnly {
				assert.NotContains(t, info, k)
			}
			if !tt.serverFile {
				assert.NoFileExists(t, srv, "the server prints no result, so it writes no file")
				return
			}
			_, sdoc := readJSON(t, srv)
			assert.Equal(t, tt.results, sdoc["results"])
			for _, k := range tt.serverOnly {
				assert.Contains(t, sdoc["test_info"], k)
			}
			for _, k := range tt.clientOnly {
				assert.NotContains(t, sdoc["test_info"], k)
			}
		})
	}
}

func TestOutJSONFlags(t *testing.T) {
	p, err := ParseArgs(Test{VerbWrite, BW}, nil)
	require.NoError(t, err)
	assert.False(t, p.OutJSON)
	assert.Equal(t, "perftest_out.json", p.OutJSONFile)

	p, err = ParseArgs(Test{VerbSend, Lat}, []string{"--out_json", "--out_json_file=/tmp/x.json"})
	require.NoError(t, err)
	assert.True(t, p.OutJSON)
	assert.Equal(t, "/tmp/x.json", p.OutJSONFile)
}

// With -R perftest says so in the file, with the exchange method and a -T TOS; -z changes only
// the exchange method.
func TestOutJSONRDMACM(t *testing.T) {
	tests := []struct {
		args, want string
	}{
		{"-R", "\"rdma_cm_QPs\": \"ON\",\n\"Use_ROCm_memory\": \"OFF\",\n\"Data_ex_method\": \"rdma_cm\"\n},\n"},
		{"-R -T 96", "\"rdma_cm_QPs\": \"ON\",\n\"Use_ROCm_memory\": \"OFF\",\n\"Data_ex_method\": \"rdma_cm\",\n\"TOS\": 96\n},\n"},
		{"-z", "\"rdma_cm_QPs\": \"OFF\",\n\"Use_ROCm_memory\": \"OFF\",\n\"Data_ex_method\": \"rdma_cm\"\n},\n"},
	}
	for _, tt := range tests {
		p, err := ParseArgs(Test{VerbWrite, BW}, strings.Fields(tt.args))
		require.NoError(t, err)
		text := jsonReport(p, info{device: "gorxe_test", mtuBytes: 1024, gidIndex: 1}, "")
		assert.Contains(t, text, tt.want, tt.args)
	}
}
