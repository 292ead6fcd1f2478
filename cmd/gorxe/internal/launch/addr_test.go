package launch

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCheckAddr: what devselect reads as GORXE_ADDR, and only what this host's device can bind
// to: loopback's interface and addresses (any of 127.0.0.0/8) pass; a name that is no interface
// and no address, an address of no interface (198.51.100.0/24 is for documentation) and a bad
// GORXE_PORT, which the library would refuse, do not.
func TestCheckAddr(t *testing.T) {
	env := func(port string) func(string) string {
		return func(k string) string {
			if k == "GORXE_PORT" {
				return port
			}
			return ""
		}
	}
	tests := []struct {
		name, port, err string
	}{
		{name: "lo"},
		{name: "gorxe_lo"},
		{name: "127.0.0.1"},
		{name: "127.21.0.9"},
		{name: "gorxe_127.21.0.9"},
		{name: "nosuch0", err: "--addr nosuch0: no interface of this host is called that, and it is no IP address"},
		{name: "127.0.0", err: "--addr 127.0.0: no interface of this host is called that, and it is no IP address"},
		{name: "198.51.100.7", err: "--addr 198.51.100.7: no interface of this host has the address 198.51.100.7"},
		{name: "127.0.0.1", port: "0", err: `GORXE_PORT="0" is not a UDP port number (1-65535)`},
	}
	for _, tc := range tests {
		err := checkAddr("--addr "+tc.name, tc.name, env(tc.port))
		if tc.err == "" {
			assert.NoError(t, err, tc.name)
		} else {
			assert.EqualError(t, err, tc.err, tc.name)
		}
	}
	ifs, err := net.Interfaces()
	if assert.NoError(t, err) {
		for _, ifi := range ifs {
			if ifi.Flags&net.FlagUp == 0 {
				assert.EqualError(t, checkAddr("GORXE_ADDR="+ifi.Name, ifi.Name, env("")),
					"GORXE_ADDR="+ifi.Name+": interface "+ifi.Name+" is down or has no address")
				break
			}
		}
	}
}
