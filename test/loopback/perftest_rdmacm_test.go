package loopback

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -R connects the test's QPs through RDMA-CM (REQ, REP and RTU on QP1) and runs the exchange over
// an RDMA-CM connection of its own; -z moves only the exchange. Both sides must finish, report
// the client's size and iterations, and say so in their headers.
func TestPerftestRDMACM(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, title   string
		args          []string
		qps           int
		size, iters   string
		serverReports bool
		cmQPs         string
	}{
		{"write_bw", "RDMA_Write BW Test", []string{"-R", "-n", "200", "-s", "8192"}, 1, "8192", "200", true, "ON"},
		{"write_bw", "RDMA_Write BW Test", []string{"-R", "-n", "50", "-s", "1024", "-q", "3"}, 3, "1024", "150", true, "ON"},
		{"read_bw", "RDMA_Read BW Test", []string{"-R", "-n", "100", "-s", "16384", "-T", "32"}, 1, "16384", "100", true, "ON"},
		{"send_bw", "Send BW Test", []string{"-R", "-n", "200", "-s", "4096"}, 1, "4096", "200", true, "ON"},
		{"send_lat", "Send Latency Test", []string{"-R", "-n", "200", "-s", "64"}, 1, "64", "200", true, "ON"},
		{"write_lat", "RDMA_Write Latency Test", []string{"-R", "-n", "200"}, 1, "2", "200", true, "ON"},
		{"read_lat", "RDMA_Read Latency Test", []string{"--rdma_cm", "-n", "100", "--retry_count", "5"}, 1, "2", "100", false, "ON"},
		{"atomic_bw", "Atomic FETCH_AND_ADD BW Test", []string{"-R", "-n", "100"}, 1, "8", "100", true, "ON"},
		// -c UD: the QPs find each other with SIDR in RDMA-CM's UDP port space; the latency
		// test's client sends its QPN to the server first.
		{"send_bw", "Send BW Test", []string{"-R", "-c", "UD", "-n", "200", "-s", "1024", "-q", "2"}, 2, "1024", "400", true, "ON"},
		{"send_lat", "Send Latency Test", []string{"-R", "-c", "UD", "-n", "200", "-s", "64"}, 1, "64", "200", true, "ON"},
		// More QPs than RDMA-CM's default backlog (16): the server listens with a backlog of -q in
		// both port spaces, as perftest's does.
		{"send_bw", "Send BW Test", []string{"-R", "-c", "UD", "-n", "50", "-s", "1024", "-q", "20"}, 20, "1024", "1000", true, "ON"},
		{"write_bw", "RDMA_Write BW Test", []string{"-R", "-n", "20", "-s", "1024", "-q", "20"}, 20, "1024", "400", true, "ON"},
		{"write_bw", "RDMA_Write BW Test", []string{"-z", "-n", "100", "-s", "4096"}, 1, "4096", "100", true, "OFF"},
		{"send_bw", "Send BW Test", []string{"-z", "-n", "100", "-s", "1024", "-c", "UD", "-x", "1"}, 1, "1024", "100", true, "OFF"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			r := runPerftest(t, tt.tool, tt.args...)
			r.checkPerftest(t, tt.title, tt.qps, tt.size, tt.iters, tt.serverReports)
			for who, out := range map[string]string{"server": r.server.Stdout(), "client": r.client.Stdout()} {
				assert.Contains(t, out, " rdma_cm QPs\t : "+tt.cmQPs+"\n", "%s:\n%s", who, out)
				assert.Contains(t, out, " Data ex. method : rdma_cm", "%s:\n%s", who, out)
			}
		})
	}
}

// -R over IPv6: the client names the server by its link-local address, with the zone, and the
// RDMA-CM connections run between the two IPv6 GIDs, on a private UDP port.
func TestPerftestRDMACMIPv6(t *testing.T) {
	t.Parallel()
	ll, other, env := linkLocalHost(t)
	port := FreeTCPPort(t)
	server := Start(t, env, "send_lat", "-R", "--bind", ll.String(), "--ipv6", "-p", port, "-n", "20")
	server.WaitLine("Waiting for client to connect", 10*time.Second)
	client := Start(t, env, "send_lat", "-R", "--bind", other.String(), "--ipv6", "-p", port, "-n", "20", ll.String())
	for _, p := range []*Proc{client, server} {
		if code := p.Wait(20 * time.Second); code != 0 {
			require.Fail(t, fmt.Sprintf("%s: status %d\n%s%s", p.name, code, p.Stdout(), p.Stderr()))
		}
	}
	cli := parsePerftest(t, "client", client.Stdout())
	assert.False(t, len(cli.results) != 1 || cli.results[0][1] != "20", "client results %v", cli.results)
	assert.Equal(t, []string{decimalGID(other.String()), decimalGID(ll.WithZone("").String())}, cli.gids, "client's GIDs")
}
