package main

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGIDString(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"198.18.0.11", "0000:0000:0000:0000:0000:ffff:c612:000b"},
		{"fd67:6f72:7865::11", "fd67:6f72:7865:0000:0000:0000:0000:0011"},
	} {
		a := netip.MustParseAddr(tc.addr)
		if a.Is4() {
			a = netip.AddrFrom16(a.As16())
		}
		if got := gidString(a); got != tc.want {
			t.Errorf("gidString(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
}

func TestGuestAddrs(t *testing.T) {
	ip4, ip6 := guestAddrs(2)
	if ip4.String() != "198.18.0.12/24" || ip6.String() != "fd67:6f72:7865::12/64" {
		t.Errorf("guestAddrs(2) = %v %v", ip4, ip6)
	}
}

func TestLinkLocal(t *testing.T) {
	mac, _ := net.ParseMAC(fmt.Sprintf(guestMAC, 1))
	if got := eui64LinkLocal(mac).String(); got != "fe80::5054:ff:fe67:7801" {
		t.Errorf("link-local of %v = %s", mac, got)
	}
	v := &vm{n: 2}
	if got := gidString(v.addr(linkLocal)); got != "fe80:0000:0000:0000:5054:00ff:fe67:7802" {
		t.Errorf("VM 2's link-local GID %s", got)
	}
	if got := describe(phase{}, c(rcPingpong, linkLocal, 1024, 0, "-n", "5")); got != "ipv6ll mtu1024 -n 5" {
		t.Errorf("describe: %q", got)
	}
	if got := strings.Join(commonOpts(c(rcPingpong, linkLocal, 1024, 0), 0, 18600), " "); got != "-g 0 -p 18600 -m 1024" {
		t.Errorf("options: %q", got)
	}
}

func TestHostOf(t *testing.T) {
	for in, want := range map[string]string{
		"198.18.0.1:49152":          "198.18.0.1",
		"[fd67:6f72:7865::1]:49152": "fd67:6f72:7865::1",
	} {
		if got := hostOf(in); got != want {
			t.Errorf("hostOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCommonOpts(t *testing.T) {
	for _, tc := range []struct {
		rc   runCase
		want string
	}{
		{c(rcPingpong, 4, 1024, 0, "-s", "1"), "-g 1 -p 18600 -m 1024 -s 1"},
		{c(udPingpong, 6, 4096, 0, "-s", "4096"), "-g 1 -p 18600 -s 4096"},
		{c(writeBW, 4, 4096, 0, "-n", "5"), "-x 1 -p 18600 -m 4096 -F -n 5"},
	} {
		if got := strings.Join(commonOpts(tc.rc, 1, 18600), " "); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.rc.tool.c, got, tc.want)
		}
	}
}

func TestMatrixCoversEveryToolBothFamiliesAndMTUs(t *testing.T) {
	seen := map[string]bool{}
	loss := false
	for _, p := range gorxeMatrix() {
		for _, rc := range p.cases {
			seen[rc.tool.c] = true
			seen[p.label+" "+familyName(rc.family)] = true
			if p.loss && !rc.tool.rc {
				t.Errorf("%s runs under loss but is not RC", rc.tool.c)
			}
			loss = loss || p.loss
		}
	}
	for _, tl := range []tool{rcPingpong, ucPingpong, udPingpong, srqPingpong, writeBW, readBW, sendBW,
		atomicBW, writeLat, readLat, sendLat, atomicLat} {
		if !seen[tl.c] {
			t.Errorf("%s is not in the matrix", tl.c)
		}
	}
	for _, k := range []string{"mtu1500 ipv4", "mtu1500 ipv6", "mtu1500 ipv6ll", "mtu9000 ipv4", "mtu9000 ipv6"} {
		if !seen[k] {
			t.Errorf("no case for %s", k)
		}
	}
	if !loss {
		t.Error("no phase with loss")
	}
}

func TestCaptureProblem(t *testing.T) {
	ok := captureCheck{Packets: 4, BySrc: map[string]int{"a": 2, "b": 2}}
	if p := ok.problem("a", "b"); p != "" {
		t.Errorf("clean capture: %q", p)
	}
	oneWay := captureCheck{Packets: 2, BySrc: map[string]int{"a": 2}}
	if p := oneWay.problem("a", "b"); !strings.Contains(p, "no packets from b") {
		t.Errorf("one-way capture: %q", p)
	}
	bad := captureCheck{Packets: 2, BadICRC: 1, BySrc: map[string]int{"a": 1, "b": 1}, FirstBad: "{...}"}
	if p := bad.problem("a", "b"); !strings.Contains(p, "1 of 2 packets with a bad ICRC") {
		t.Errorf("bad ICRC: %q", p)
	}
}

func TestDropped(t *testing.T) {
	c := &capture{}
	c.stderr.WriteString("20 packets captured\n21 packets received by filter\n3 packets dropped by kernel\n")
	if n := c.dropped(); n != 3 {
		t.Errorf("dropped = %d, want 3", n)
	}
	if n := (&capture{}).dropped(); n != -1 {
		t.Errorf("dropped without statistics = %d, want -1", n)
	}
}

func TestParsers(t *testing.T) {
	ldd := "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n"
	var libs []string
	for _, m := range lddRE.FindAllStringSubmatch(ldd, -1) {
		libs = append(libs, m[1])
	}
	if want := []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}; !slices.Equal(libs, want) {
		t.Errorf("ldd libraries %v, want %v", libs, want)
	}
	dep := "builtin crc32c\ninsmod /k/lib/modules/6.1/kernel/net/ipv4/udp_tunnel.ko \ninsmod /k/rdma_rxe.ko\n"
	var mods []string
	for _, m := range insmodRE.FindAllStringSubmatch(dep, -1) {
		mods = append(mods, m[1])
	}
	if want := []string{"/k/lib/modules/6.1/kernel/net/ipv4/udp_tunnel.ko", "/k/rdma_rxe.ko"}; !slices.Equal(mods, want) {
		t.Errorf("modules %v, want %v", mods, want)
	}
	if m := kernelPackageRE.FindStringSubmatch("linux-image-amd64\n  Depends: linux-image-6.1.0-56-amd64\n"); m == nil || m[1] != "linux-image-6.1.0-56-amd64" {
		t.Errorf("kernel package: %v", m)
	}
}

func TestCountersMinus(t *testing.T) {
	d := counters{"sent_pkts": 10, "rcvd_pkts": 7}.minus(counters{"sent_pkts": 4, "rcvd_pkts": 7})
	if d["sent_pkts"] != 6 || d.String() != "sent_pkts=6" {
		t.Errorf("delta %v", d)
	}
}

func TestStagePath(t *testing.T) {
	for in, want := range map[string]string{
		"/lib/x86_64-linux-gnu/libc.so.6": "/s/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/lib64/ld-linux-x86-64.so.2":     "/s/usr/lib64/ld-linux-x86-64.so.2",
		"/usr/bin/ib_write_bw":            "/s/usr/bin/ib_write_bw",
	} {
		if got := stagePath("/s", in); got != want {
			t.Errorf("stagePath(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestCMArgvs(t *testing.T) {
	rxe := &rxeEndpoint{v: &vm{n: 1, ip4: netip.MustParsePrefix("198.18.0.11/24"), ip6: netip.MustParsePrefix("fd67:6f72:7865::11/64")}}
	gx := &gorxeEndpoint{bin: "gorxe", dev: []string{"-d", "br"}}
	srv, cli := cmArgvs(c(rping, 4, 1024, 0, "-C", "10", "-v"), rxe, gx, 18600)
	assert.Equal(t, "gorxe rping -s -a "+hostIP4.Addr().String()+" -p 18600 -C 10 -v -d", strings.Join(srv, " "))
	assert.Equal(t, "rping -c -a "+hostIP4.Addr().String()+" -p 18600 -C 10 -v", strings.Join(cli, " "))
	srv, cli = cmArgvs(c(ucmatose, 6, 1024, 0, "-C", "10"), gx, rxe, 18601)
	assert.Equal(t, "ucmatose -b fd67:6f72:7865::11 -p 18601 -C 10", strings.Join(srv, " "))
	assert.Equal(t, "gorxe ucmatose -s fd67:6f72:7865::11 -p 18601 -C 10", strings.Join(cli, " "))
	assert.Equal(t, "ipv6 -C 10", describe(phase{}, c(ucmatose, 6, 1024, 0, "-C", "10")))

	var cmRuns []string
	for _, p := range gorxeMatrix() {
		for _, rc := range p.cases {
			if rc.tool.cm != nil {
				cmRuns = append(cmRuns, rc.tool.c+" "+familyName(rc.family))
			}
		}
	}
	assert.ElementsMatch(t, []string{"rping ipv4", "rping ipv6", "ucmatose ipv4", "ucmatose ipv6"}, cmRuns)
}
