package main

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMckeyArgvs(t *testing.T) {
	rxe := &rxeEndpoint{v: &vm{n: 1, ip4: netip.MustParsePrefix("198.18.0.11/24"), ip6: netip.MustParsePrefix("fd67:6f72:7865::11/64")}}
	gx := &gorxeEndpoint{bin: "gorxe", dev: []string{"-d", "br"}}
	rc := c(mckey, 4, 1024, 0, "-C", "10")
	srv, cli := cmArgvs(rc, rxe, gx, 18600)
	assert.Equal(t, "gorxe mckey -m 239.18.0.1 -b "+hostIP4.Addr().String()+" -C 10 --pause 0", strings.Join(srv, " "))
	assert.Equal(t, "mckey -m 239.18.0.1 -s -b 198.18.0.11 -C 10", strings.Join(cli, " "))
	srv, cli = cmArgvs(rc, gx, rxe, 18601)
	assert.Equal(t, "mckey -m 239.18.0.1 -b 198.18.0.11 -C 10", strings.Join(srv, " "))
	assert.Equal(t, "gorxe mckey -m 239.18.0.1 -s -b "+hostIP4.Addr().String()+" -C 10", strings.Join(cli, " "))
	assert.Equal(t, "ipv4 -C 10", describe(phase{}, rc))

	// Only the sender's packets are on the wire.
	assert.Equal(t, []string{"198.18.0.11"}, capturePeers(rc, rxe, gx))
	assert.Equal(t, []string{"198.18.0.11", hostIP4.Addr().String()}, capturePeers(c(ucmatose, 4, 1024, 0), gx, rxe))
}
