package loopback

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestToolCapture runs write_bw with the server capturing through GORXE_PCAP and the client
// through --pcap: gorxe dump reads both files, every packet with a valid ICRC, and each side's
// file holds traffic in both directions.
func TestToolCapture(t *testing.T) {
	dir := t.TempDir()
	srvFile, cliFile := filepath.Join(dir, "server.pcapng"), filepath.Join(dir, "client.pcapng")
	srvAddr, cliAddr := LoopbackPair(t)
	port := FreeTCPPort(t)
	server := Start(t, []string{"GORXE_PCAP=" + srvFile}, "write_bw", "-p", port, "-n", "20", "-s", "8192", "--bind", srvAddr)
	server.WaitLine("Waiting for client to connect", 10*time.Second)
	client := Start(t, nil, "write_bw", "-p", port, "-n", "20", "-s", "8192", "--bind", cliAddr, "--pcap", cliFile, srvAddr)
	for _, p := range []*Proc{client, server} {
		require.Zero(t, p.Wait(20*time.Second), "%s\nstdout:\n%s\nstderr:\n%s", p.name, p.Stdout(), p.Stderr())
	}
	for _, f := range []string{srvFile, cliFile} {
		out, err := exec.Command(gorxeBin, "dump", f).Output()
		require.NoError(t, err, f)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		require.Greater(t, len(lines), 20, "%s: %d packets", f, len(lines))
		var fromSrv, fromCli int
		for _, l := range lines {
			assert.Contains(t, l, "icrc=ok", l)
			f := strings.Fields(l) // #N time src > dst ...
			require.Greater(t, len(f), 3, l)
			switch {
			case strings.HasPrefix(f[2], srvAddr+":"):
				fromSrv++
			case strings.HasPrefix(f[2], cliAddr+":"):
				fromCli++
			}
		}
		assert.NotZero(t, fromSrv, "%s: nothing from the server", f)
		assert.NotZero(t, fromCli, "%s: nothing from the client", f)
	}
}
