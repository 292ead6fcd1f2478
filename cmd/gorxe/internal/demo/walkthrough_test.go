package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/packet"
)

// captured reads a walkthrough capture back as one line per frame: who sent it to whom, the
// opcode, the PSN and, with an AETH, the syndrome. Frames are decoded from their bytes, Ethernet
// then IP and UDP then RoCE, and each ICRC must verify.
func captured(t *testing.T, path string, names map[netip.Addr]string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	require.NoError(t, err)
	var lines []string
	for {
		data, _, err := r.ReadPacketData()
		if err == io.EOF {
			return lines
		}
		require.NoError(t, err)
		require.Greater(t, len(data), 14)
		env, udp, err := packet.ParseEnvelope(data[14:])
		require.NoError(t, err)
		env.IPFlags = packet.IPv4DontFragment
		require.NoError(t, env.VerifyICRC(udp), "frame %d", len(lines)+1)
		var p packet.Parsed
		require.NoError(t, packet.Parse(udp, &p))
		l := fmt.Sprintf("%s→%s %v psn=%d", names[env.Src.Addr()], names[env.Dst.Addr()], p.Opcode(), p.BTH().PSN())
		if a := p.AETH(); a != nil {
			l += " " + syndromeText(a.Syndrome())
		}
		lines = append(lines, l)
	}
}

// TestWalkthrough runs the walkthrough's exchanges and checks every capture packet by packet:
// docs/wire-walkthrough.md explains exactly these sequences.
func TestWalkthrough(t *testing.T) {
	a, b := netip.MustParseAddr("127.30.5.1"), netip.MustParseAddr("127.30.5.2")
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, Walkthrough(context.Background(), Options{A: a, B: b}, dir, &out), out.String())
	names := map[netip.Addr]string{a: "A", b: "B"}
	want := map[string][]string{
		"rc-send": {
			"A→B RC_SEND_FIRST psn=1000", "A→B RC_SEND_MIDDLE psn=1001", "A→B RC_SEND_LAST psn=1002",
			"B→A RC_ACKNOWLEDGE psn=1002 ACK",
		},
		"rdma-write": {
			"A→B RC_RDMA_WRITE_FIRST psn=1000", "A→B RC_RDMA_WRITE_MIDDLE psn=1001", "A→B RC_RDMA_WRITE_MIDDLE psn=1002",
			"A→B RC_RDMA_WRITE_MIDDLE psn=1003", "A→B RC_RDMA_WRITE_LAST psn=1004", "B→A RC_ACKNOWLEDGE psn=1004 ACK",
		},
		"rdma-read": {
			"A→B RC_RDMA_READ_REQUEST psn=1000", "B→A RC_RDMA_READ_RESPONSE_FIRST psn=1000 ACK",
			"B→A RC_RDMA_READ_RESPONSE_MIDDLE psn=1001", "B→A RC_RDMA_READ_RESPONSE_LAST psn=1002 ACK",
		},
		"atomics": {
			"A→B RC_COMPARE_SWAP psn=1000", "B→A RC_ATOMIC_ACKNOWLEDGE psn=1000 ACK",
			"A→B RC_FETCH_ADD psn=1001", "B→A RC_ATOMIC_ACKNOWLEDGE psn=1001 ACK",
		},
		// PSN 1001 was lost: not in the capture, as on any wire.
		"go-back-n": {
			"A→B RC_RDMA_WRITE_FIRST psn=1000", "A→B RC_RDMA_WRITE_MIDDLE psn=1002", "A→B RC_RDMA_WRITE_MIDDLE psn=1003",
			"A→B RC_RDMA_WRITE_LAST psn=1004", "B→A RC_ACKNOWLEDGE psn=1001 NAK_PSN_SEQUENCE_ERROR",
			"A→B RC_RDMA_WRITE_MIDDLE psn=1001", "A→B RC_RDMA_WRITE_MIDDLE psn=1002", "A→B RC_RDMA_WRITE_MIDDLE psn=1003",
			"A→B RC_RDMA_WRITE_LAST psn=1004", "B→A RC_ACKNOWLEDGE psn=1004 ACK",
		},
		"rnr": {
			"A→B RC_SEND_ONLY psn=1000", "B→A RC_ACKNOWLEDGE psn=1000 RNR_NAK(40.96ms)",
			"A→B RC_SEND_ONLY psn=1000", "B→A RC_ACKNOWLEDGE psn=1000 ACK",
		},
		"ud": {"A→B UD_SEND_ONLY psn=1000"},
	}
	require.Len(t, scenes, len(want))
	committed := map[netip.Addr]string{netip.MustParseAddr("127.0.0.1"): "A", netip.MustParseAddr("127.0.0.2"): "B"}
	for _, sc := range scenes {
		// A busy machine may delay an acknowledgement past the ACK timer, adding a resend of
		// a packet already shown: the fresh run must tell the same story but for such repeats.
		assert.Equal(t, firstCopies(want[sc.name]), firstCopies(captured(t, filepath.Join(dir, sc.name+".pcapng"), names)), sc.name)
		// The captures the document shows are this code's: make walkthrough has been run.
		assert.Equal(t, want[sc.name], captured(t, filepath.Join(docDir, "walkthrough", sc.name+".pcapng"), committed), "committed %s", sc.name)
		svg, err := os.ReadFile(filepath.Join(dir, sc.name+".svg"))
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(svg, []byte("<svg ")), sc.name)
	}
	// The diagrams show what the captures imply: the loss the NAK reveals, the RNR NAK's wait.
	gbn, err := os.ReadFile(filepath.Join(dir, "go-back-n.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(gbn), "lost psn=1001")
	assert.Contains(t, out.String(), "psn=1001 len=1024 icrc=ok  ✗ LOST (fault injection)")

	// Every packet line the document quotes is one this run narrated, but for the addresses,
	// memory addresses and keys, which differ from run to run.
	doc, err := os.ReadFile(filepath.Join(docDir, "wire-walkthrough.md"))
	require.NoError(t, err)
	narrated := map[string]bool{}
	for _, l := range strings.Split(out.String(), "\n") {
		narrated[runNeutral(strings.TrimSpace(l), a, b)] = true
	}
	quoted := 0
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "A→B  #") || strings.HasPrefix(l, "B→A  #") {
			quoted++
			assert.True(t, narrated[runNeutral(l, netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2"))], "the document quotes a packet the walkthrough does not send: %s", l)
		}
	}
	assert.Equal(t, 34, quoted, "packet lines quoted by the document")
}

// firstCopies drops the lines that repeat an earlier one.
func firstCopies(lines []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range lines {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// docDir is the repository's docs directory, seen from this package.
const docDir = "../../../../docs"

var (
	memoryKeys  = regexp.MustCompile(`va=0x[0-9a-f]+ rkey=0x[0-9a-f]+`)
	frameNumber = regexp.MustCompile(`#[0-9]+ `)
)

// runNeutral replaces what changes between walkthrough runs in a narrated line: the devices'
// addresses, B's memory address and key, and the frame number (a resend the ACK timer adds on a
// busy machine shifts the ones after it).
func runNeutral(l string, a, b netip.Addr) string {
	l = strings.ReplaceAll(l, a.String()+":", "A:")
	l = strings.ReplaceAll(l, b.String()+":", "B:")
	l = frameNumber.ReplaceAllString(l, "#N ")
	return memoryKeys.ReplaceAllString(l, "va=… rkey=…")
}

// TestLossSeed: the seed found for a pattern drops exactly those datagrams.
func TestLossSeed(t *testing.T) {
	cfg, err := lossSeed(gbnLossRate, gbnSends, gbnLost)
	require.NoError(t, err)
	got, err := lossPattern(cfg, gbnSends)
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, false, false, false, false, false, false, false}, got)
	_, err = lossSeed(0, 3, 1)
	require.Error(t, err, "nothing is ever lost at rate 0")
}
