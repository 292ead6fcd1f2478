package dump

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/packet"
)

// TestJSONMatchesWireshark dumps the golden capture as JSON and checks every
// record against Wireshark's decoding of the same frame, and that every ICRC
// verified.
func TestJSONMatchesWireshark(t *testing.T) {
	var out, errOut bytes.Buffer
	st, err := Run(&out, &errOut, bytes.NewReader(readFile(t, goldenPcapng)), FormatJSON)
	require.NoError(t, err, "Run: %v, stderr %q", err, errOut.String())
	require.Equal(t, 0, errOut.Len(), "Run: %v, stderr %q", err, errOut.String())
	assert.Equal(t, (Stats{Frames: 2540, RoCE: 2540}), st, "stats %+v", st)
	rows, err := csv.NewReader(bytes.NewReader(readFile(t, goldenCSV))).ReadAll()
	require.NoError(t, err)
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	rows = rows[1:]

	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	n := 0
	for ; sc.Scan(); n++ {
		require.Less(t, n, len(rows), "more records than Wireshark rows: %s", sc.Text())
		var r Record
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "line %d", n+1)
		for _, d := range diffRecord(&r, rows[n], col) {
			assert.Fail(t, fmt.Sprintf("frame %d: %s", r.Frame, d))
		}
		assert.True(t, r.ICRCOK, "frame %d: ICRC did not verify", r.Frame)
		require.False(t, t.Failed(), "stopping at frame %d: %s", r.Frame, sc.Text())
	}
	assert.Equal(t, len(rows), n, "%d records, Wireshark has %d rows", n, len(rows))
}

// diffRecord compares a record with a Wireshark CSV row and describes every
// difference. Wireshark prints some numbers in hex, so values that parse as
// numbers compare as numbers; an absent field is an empty cell.
func diffRecord(r *Record, row []string, col map[string]int) []string {
	var diffs []string
	get := func(name string) string {
		i, ok := col[name]
		if !ok {
			diffs = append(diffs, "no CSV column "+name)
			return "?"
		}
		return row[i]
	}
	want := func(name string, got any) {
		var g string
		switch v := got.(type) {
		case nil:
		case bool:
			g = map[bool]string{false: "0", true: "1"}[v]
		default:
			g = fmt.Sprint(v)
		}
		w := get(name)
		gn, gerr := strconv.ParseUint(g, 0, 64)
		wn, werr := strconv.ParseUint(w, 0, 64)
		if gerr == nil && werr == nil && gn == wn || g == w {
			return
		}
		diffs = append(diffs, fmt.Sprintf("%s: got %q, Wireshark %q", name, g, w))
	}
	addrPort := func(ip, port string) string {
		if ip == "" {
			return ""
		}
		if a, err := netip.ParseAddr(ip); err == nil && a.Is6() {
			return "[" + ip + "]:" + port
		}
		return ip + ":" + port
	}

	want("frame.number", r.Frame)
	if got, w := r.Src, addrPort(get("ip.src")+get("ipv6.src"), get("udp.srcport")); got != w {
		diffs = append(diffs, fmt.Sprintf("src %q, Wireshark %q", got, w))
	}
	if got, w := r.Dst, addrPort(get("ip.dst")+get("ipv6.dst"), strconv.Itoa(packet.UDPPort)); got != w {
		diffs = append(diffs, fmt.Sprintf("dst %q, Wireshark %q", got, w))
	}
	want("udp.length", packet.UDPHeaderSize+packet.PacketLen(packet.Opcode(r.Opcode), r.PayloadLen))
	want("infiniband.bth.opcode", r.Opcode)
	want("infiniband.bth.se", r.SE)
	want("infiniband.bth.m", r.MigReq)
	want("infiniband.bth.padcnt", r.Pad)
	want("infiniband.bth.p_key", r.PKey)
	want("infiniband.bth.destqp", r.DQPN)
	want("infiniband.bth.a", r.AckReq)
	want("infiniband.bth.psn", r.PSN)

	value := func(h packet.Header, key string) any {
		hr, ok := r.Header(h)
		if !ok {
			return nil
		}
		v, ok := hr.Value(key)
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%v has no field %q", h, key))
		}
		return v
	}
	va, rkey, dmalen := value(packet.HeaderRETH, "va"), value(packet.HeaderRETH, "rkey"), value(packet.HeaderRETH, "dmalen")
	if _, ok := r.Header(packet.HeaderAtomicETH); ok {
		// Wireshark shows an AtomicETH's address and key in the RETH fields.
		va, rkey = value(packet.HeaderAtomicETH, "va"), value(packet.HeaderAtomicETH, "rkey")
	}
	swap, cmp := value(packet.HeaderAtomicETH, "swap"), value(packet.HeaderAtomicETH, "compare")
	syn, msn := value(packet.HeaderAETH, "syndrome"), value(packet.HeaderAETH, "msn")
	qkey, srcqp := value(packet.HeaderDETH, "qkey"), value(packet.HeaderDETH, "srcqp")
	imm, ieth := value(packet.HeaderImmDt, "immdt"), value(packet.HeaderIETH, "ieth")
	orig := value(packet.HeaderAtomicAckETH, "orig")
	want("infiniband.reth.va", va)
	want("infiniband.reth.r_key", rkey)
	want("infiniband.reth.dmalen", dmalen)
	want("infiniband.aeth.syndrome", syn)
	want("infiniband.aeth.msn", msn)
	want("infiniband.deth.q_key", qkey)
	want("infiniband.deth.srcqp", srcqp)
	want("infiniband.immdt", imm)
	want("infiniband.ieth", ieth)
	want("infiniband.atomiceth.swapdt", swap)
	want("infiniband.atomiceth.cmpdt", cmp)
	want("infiniband.atomicacketh.origremdt", orig)
	want("infiniband.invariant.crc", r.ICRC)
	return diffs
}
