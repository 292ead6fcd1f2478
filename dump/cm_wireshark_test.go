package dump

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cmGoldenGlob finds the golden connection manager captures: the MADs to QP1 of RDMA-CM runs
// (rping, ucmatose) between kernel rxe and kernel rxe or gorxe, each with Wireshark's decoding
// of it beside it in NAME.tshark.csv (see regen.sh there).
const cmGoldenGlob = "../cm/mad/testdata/*.pcap"

// notInWireshark are the prefixes of the MAD fields Wireshark 4.0 does not decode: the CM
// messages it has no fields for, and the REQ path's flow label, which it reads shifted (regen.sh).
var notInWireshark = []string{
	"infiniband.cm.mra.", "infiniband.cm.sidr_", "infiniband.cm.lap.", "infiniband.cm.apr.",
	"infiniband.cm.req.prim_flowlabel",
}

// TestMADJSONMatchesWireshark dumps every golden CM capture as JSON and checks each MAD field of
// each record against Wireshark's decoding of the same frame: every value Wireshark shows, gorxe
// shows the same under the same name, and gorxe shows nothing Wireshark does not.
func TestMADJSONMatchesWireshark(t *testing.T) {
	files, err := filepath.Glob(cmGoldenGlob)
	require.NoError(t, err)
	require.NotEmpty(t, files)
	seen := map[string]int{}
	for _, pcap := range files {
		t.Run(filepath.Base(pcap), func(t *testing.T) {
			var out, errOut bytes.Buffer
			st, err := Run(&out, &errOut, bytes.NewReader(readFile(t, pcap)), FormatJSON)
			require.NoError(t, err, "stderr %q", errOut.String())
			require.Equal(t, 0, errOut.Len(), "stderr %q", errOut.String())
			rows, err := csv.NewReader(bytes.NewReader(readFile(t, strings.TrimSuffix(pcap, ".pcap")+".tshark.csv"))).ReadAll()
			require.NoError(t, err)
			header, rows := rows[0], rows[1:]
			require.Equal(t, len(rows), st.RoCE, "Wireshark rows and RoCE packets")
			col := map[string]int{}
			for i, name := range header {
				col[name] = i
			}

			sc := bufio.NewScanner(&out)
			sc.Buffer(nil, 1<<20)
			for n := 0; sc.Scan(); n++ {
				require.Less(t, n, len(rows), "more records than Wireshark rows")
				var r Record
				require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
				row := rows[n]
				require.Equal(t, row[col["frame.number"]], strconv.Itoa(r.Frame))
				require.NotEmpty(t, r.CM, "frame %d carries no CM message: %s", r.Frame, sc.Text())
				seen[r.CM]++
				for i, name := range header {
					if !strings.HasPrefix(name, "infiniband.mad.") && !strings.HasPrefix(name, "infiniband.cm.") {
						continue
					}
					f, ok := r.MADValue(name)
					if row[i] == "" {
						assert.False(t, ok, "frame %d: %s is %+v, Wireshark shows none", r.Frame, name, f)
						continue
					}
					if !assert.True(t, ok, "frame %d: no %s, Wireshark shows %s", r.Frame, name, row[i]) {
						continue
					}
					if f.IsAddr() {
						assert.Equal(t, row[i], f.Addr.String(), "frame %d: %s", r.Frame, name)
						continue
					}
					want, err := strconv.ParseUint(row[i], 0, 64)
					require.NoError(t, err, "frame %d: %s", r.Frame, name)
					assert.Equal(t, want, f.Value, "frame %d: %s is 0x%x, Wireshark %s", r.Frame, name, f.Value, row[i])
				}
				for _, f := range r.MAD {
					_, inCSV := col[f.Name]
					assert.True(t, inCSV || lacksWireshark(f.Name), "frame %d: %s has no Wireshark column", r.Frame, f.Name)
				}
			}
		})
	}
	// Between them the captures hold a whole connection's life, seen from both ends.
	for _, msg := range []string{"REQ", "REP", "RTU", "DREQ", "DREP"} {
		assert.Positive(t, seen[msg], "no %s in the golden CM captures", msg)
	}
}

func lacksWireshark(name string) bool {
	for _, p := range notInWireshark {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// TestMADNotCM checks that a MAD of another management class to QP1 shows its common header and
// no CM message, and that a packet to another QP shows no MAD.
func TestMADNotCM(t *testing.T) {
	files, err := filepath.Glob(cmGoldenGlob)
	require.NoError(t, err)
	require.NotEmpty(t, files)
	r, err := NewReader(bytes.NewReader(readFile(t, files[0])))
	require.NoError(t, err)
	f, err := r.Next()
	require.NoError(t, err)
	d := NewDecoder()
	p, err := d.Decode(f)
	require.NoError(t, err)
	p.Payload[1] = 0x03 // SubnAdm
	msg, fields := p.MAD()
	assert.Empty(t, msg)
	require.Len(t, fields, 9)
	assert.Equal(t, MADField{Name: "infiniband.mad.mgmtclass", Title: "MgmtClass", Value: 3, Bits: 8}, fields[1])

	p.BTH.DestQP = 2
	msg, fields = p.MAD()
	assert.Empty(t, msg)
	assert.Nil(t, fields)
	assert.Nil(t, p.Record().MAD)
}

// TestMADRetransmissions reads the rping run whose kernel client's RTU was lost three times
// under loss: gorxe's server retransmitted its REP (one copy lost on the way, so four of five
// reached the capture), the kernel answered each copy with its RTU again, and every copy carries
// the transaction and communication IDs of the first.
func TestMADRetransmissions(t *testing.T) {
	var out, errOut bytes.Buffer
	_, err := Run(&out, &errOut, bytes.NewReader(readFile(t, "../cm/mad/testdata/rping-loss-kernel-client-ipv4.pcap")), FormatJSON)
	require.NoError(t, err)
	count := map[string]int{}
	tids := map[uint64]bool{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var r Record
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		count[r.CM]++
		tid, ok := r.MADValue("infiniband.mad.transactionid")
		require.True(t, ok)
		tids[tid.Value] = true
		if r.CM == "REP" {
			lcid, _ := r.MADValue("infiniband.cm.rep")
			assert.Equal(t, uint64(0x723a3423), lcid.Value, "frame %d", r.Frame)
		}
	}
	assert.Equal(t, map[string]int{"REQ": 1, "REP": 4, "RTU": 4, "DREQ": 1, "DREP": 1}, count)
	assert.Len(t, tids, 1)
}
