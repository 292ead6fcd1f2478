package main

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/dump"
	"github.com/gorxe/gorxe/test/interop/guestrpc"
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
		got := gidString(a)
		assert.Equal(t, tc.want, got, "gidString(%s) = %s, want %s", tc.addr, got, tc.want)
	}
}

func TestGuestAddrs(t *testing.T) {
	ip4, ip6 := guestAddrs(2)
	assert.Equal(t, "198.18.0.12/24", ip4.String(), "guestAddrs(2) = %v %v", ip4, ip6)
	assert.Equal(t, "fd67:6f72:7865::12/64", ip6.String(), "guestAddrs(2) = %v %v", ip4, ip6)
}

func TestLinkLocal(t *testing.T) {
	mac, _ := net.ParseMAC(fmt.Sprintf(guestMAC, 1))
	got := eui64LinkLocal(mac).String()
	assert.Equal(t, "fe80::5054:ff:fe67:7801", got, "link-local of %v = %s", mac, got)
	v := &vm{n: 2}
	got = gidString(v.addr(linkLocal))
	assert.Equal(t, "fe80:0000:0000:0000:5054:00ff:fe67:7802", got, "VM 2's link-local GID %s", got)
	got = describe(phase{}, c(rcPingpong, linkLocal, 1024, 0, "-n", "5"))
	assert.Equal(t, "ipv6ll mtu1024 -n 5", got, "describe: %q", got)
	got = strings.Join(commonOpts(c(rcPingpong, linkLocal, 1024, 0), 0, 18600), " ")
	assert.Equal(t, "-g 0 -p 18600 -m 1024", got, "options: %q", got)
}

func TestHostOf(t *testing.T) {
	for in, want := range map[string]string{
		"198.18.0.1:49152":          "198.18.0.1",
		"[fd67:6f72:7865::1]:49152": "fd67:6f72:7865::1",
	} {
		got := hostOf(in)
		assert.Equal(t, want, got, "hostOf(%q) = %q, want %q", in, got, want)
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
		got := strings.Join(commonOpts(tc.rc, 1, 18600), " ")
		assert.Equal(t, tc.want, got, "%s: %q, want %q", tc.rc.tool.c, got, tc.want)
	}
}

func TestMatrixCoversEveryToolBothFamiliesAndMTUs(t *testing.T) {
	seen := map[string]bool{}
	loss := false
	for _, p := range gorxeMatrix() {
		for _, rc := range p.cases {
			seen[rc.tool.c] = true
			seen[p.label+" "+familyName(rc.family)] = true
			assert.False(t, p.loss && !rc.tool.rc, "%s runs under loss but is not RC", rc.tool.c)
			loss = loss || p.loss
		}
	}
	for _, tl := range []tool{rcPingpong, ucPingpong, udPingpong, srqPingpong, writeBW, readBW, sendBW,
		atomicBW, writeLat, readLat, sendLat, atomicLat} {
		assert.True(t, seen[tl.c], "%s is not in the matrix", tl.c)
	}
	for _, k := range []string{"mtu1500 ipv4", "mtu1500 ipv6", "mtu1500 ipv6ll", "mtu9000 ipv4", "mtu9000 ipv6"} {
		assert.True(t, seen[k], "no case for %s", k)
	}
	assert.True(t, loss, "no phase with loss")
}

func TestCaptureProblem(t *testing.T) {
	ok := captureCheck{Packets: 4, BySrc: map[string]int{"a": 2, "b": 2}}
	p := ok.problem("a", "b")
	assert.Equal(t, "", p, "clean capture: %q", p)
	oneWay := captureCheck{Packets: 2, BySrc: map[string]int{"a": 2}}
	p = oneWay.problem("a", "b")
	assert.Contains(t, p, "no packets from b", "one-way capture: %q", p)
	bad := captureCheck{Packets: 2, BadICRC: 1, BySrc: map[string]int{"a": 1, "b": 1}, FirstBad: "{...}"}
	p = bad.problem("a", "b")
	assert.Contains(t, p, "1 of 2 packets with a bad ICRC", "bad ICRC: %q", p)
}

func TestDropped(t *testing.T) {
	c := &capture{}
	c.stderr.WriteString("20 packets captured\n21 packets received by filter\n3 packets dropped by kernel\n")
	n := c.dropped()
	assert.Equal(t, 3, n, "dropped = %d, want 3", n)
	n = (&capture{}).dropped()
	assert.Equal(t, -1, n, "dropped without statistics = %d, want -1", n)
}

func TestParsers(t *testing.T) {
	ldd := "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n"
	var libs []string
	for _, m := range lddRE.FindAllStringSubmatch(ldd, -1) {
		libs = append(libs, m[1])
	}
	want := []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}
	assert.Equal(t, want, libs, "ldd libraries %v, want %v", libs, want)
	dep := "builtin crc32c\ninsmod /k/lib/modules/6.1/kernel/net/ipv4/udp_tunnel.ko \ninsmod /k/rdma_rxe.ko\n"
	var mods []string
	for _, m := range insmodRE.FindAllStringSubmatch(dep, -1) {
		mods = append(mods, m[1])
	}
	want = []string{"/k/lib/modules/6.1/kernel/net/ipv4/udp_tunnel.ko", "/k/rdma_rxe.ko"}
	assert.Equal(t, want, mods, "modules %v, want %v", mods, want)
	m := kernelPackageRE.FindStringSubmatch("linux-image-amd64\n  Depends: linux-image-6.1.0-56-amd64\n")
	assert.False(t, m == nil || m[1] != "linux-image-6.1.0-56-amd64", "kernel package: %v", m)
}

func TestCountersMinus(t *testing.T) {
	d := counters{"sent_pkts": 10, "rcvd_pkts": 7}.minus(counters{"sent_pkts": 4, "rcvd_pkts": 7})
	assert.Equal(t, int64(6), d["sent_pkts"], "delta %v", d)
	assert.Equal(t, "sent_pkts=6", d.String(), "delta %v", d)
}

func TestStagePath(t *testing.T) {
	for in, want := range map[string]string{
		"/lib/x86_64-linux-gnu/libc.so.6": "/s/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/lib64/ld-linux-x86-64.so.2":     "/s/usr/lib64/ld-linux-x86-64.so.2",
		"/usr/bin/ib_write_bw":            "/s/usr/bin/ib_write_bw",
	} {
		got := stagePath("/s", in)
		assert.Equal(t, want, got, "stagePath(%s) = %s, want %s", in, got, want)
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

	var cmRuns []string // the Go tools' (TestLibraryCases lists the library's)
	for _, p := range gorxeMatrix() {
		for _, rc := range p.cases {
			if rc.tool.cm != nil && !p.loss && !rc.tool.perftest && !rc.onLibrary {
				cmRuns = append(cmRuns, rc.tool.c+" "+familyName(rc.family))
			}
		}
	}
	assert.ElementsMatch(t, []string{"rping ipv4", "rping ipv6", "ucmatose ipv4", "ucmatose ipv6",
		"udaddy ipv4", "udaddy ipv6", "rdma_server ipv4", "mckey ipv4", "mckey ipv4"}, cmRuns)
}

func TestLibrdmacmExampleArgvs(t *testing.T) {
	rxe := &rxeEndpoint{v: &vm{n: 1, ip4: netip.MustParsePrefix("198.18.0.11/24"), ip6: netip.MustParsePrefix("fd67:6f72:7865::11/64")}}
	gx := &gorxeEndpoint{bin: "gorxe", dev: []string{"-d", "br"}}
	host := hostIP4.Addr().String()
	for _, tc := range []struct {
		name     string
		rc       runCase
		cli, srv endpoint
		wantSrv  string
		wantCli  string
		listen   int
	}{
		{"udaddy, gorxe server", c(udaddy, 4, 1024, 0, "-C", "10"), rxe, gx,
			"gorxe udaddy -b " + host + " -C 10", "udaddy -s " + host + " -C 10", 7174},
		{"udaddy, rxe server", c(udaddy, 6, 1024, 0, "-C", "10"), gx, rxe,
			"udaddy -b fd67:6f72:7865::11 -C 10", "gorxe udaddy -s fd67:6f72:7865::11 -C 10", 7174},
		{"rdma_server, gorxe server", c(rdmaServer, 4, 1024, 0), rxe, gx,
			"gorxe rdma_server -p 18602 --bind " + host, "rdma_client -s " + host + " -p 18602", 18602},
		{"rdma_server, rxe server", c(rdmaServer, 4, 1024, 0), gx, rxe,
			"rdma_server -p 18602", "gorxe rdma_client -s 198.18.0.11 -p 18602", 18602},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, cli := cmArgvs(tc.rc, tc.cli, tc.srv, 18602)
			assert.Equal(t, tc.wantSrv, strings.Join(srv, " "))
			assert.Equal(t, tc.wantCli, strings.Join(cli, " "))
			assert.Equal(t, tc.listen, tc.rc.tool.cm.listenPort(18602))
		})
	}
}

// TestLossCMCases checks the RDMA-CM case of the lossy phase and the nftables rules its loss mode
// loads: DREQs spared, a quarter of the other MADs to QP1 dropped, then 2 % of everything but RC
// ACKs.
func TestLossCMCases(t *testing.T) {
	var lossy []string
	for _, p := range gorxeMatrix() {
		for _, rc := range p.cases {
			if rc.tool.cm != nil && p.loss {
				d := rc.tool.c + " " + describe(p, rc)
				if rc.onLibrary {
					d += " (on the library)"
				}
				lossy = append(lossy, d)
			}
		}
	}
	assert.Equal(t, []string{
		"rping ipv4 loss2%-no-acks+25%-mads -C 10 -v",
		"ib_write_bw ipv4 loss2%-no-acks -R -s 16384 -n 100 (gorxe: -u 18)",
		"ib_send_lat ipv4 loss2%-no-acks -R -s 2 -n 200 (gorxe: -u 18)",
		"rping ipv4 loss2%-no-acks+25%-mads -C 10 -v (on the library)",
	}, lossy, "rping loses MADs as well; perftest -R loses its exchange's SENDs and MADs at the usual rate, not its ACKs")
	rules := lossRules(lossSpareACKsCM)
	assert.Contains(t, rules, "  chain forward { type filter hook forward priority 0; policy accept;\n"+
		"    udp dport 4791 @th,104,24 == 1 @th,352,16 == 0x0015 accept\n"+
		"    udp dport 4791 @th,104,24 == 1 numgen random mod 4 == 0 counter drop\n"+
		"    udp dport 4791 @th,64,8 != 17 numgen random mod 50 == 0 counter drop\n  }\n")
	assert.NotContains(t, lossRules(lossSpareACKs), "@th,104,24")
}

// TestLossModesOfPerftest: under loss the perftest tools lose ACKs too, except ib_write_lat,
// whose server exits without a closing barrier once the last WRITE has arrived.
func TestLossModesOfPerftest(t *testing.T) {
	modes := map[string]lossMode{}
	for _, rc := range lossCases() {
		if rc.tool.perftest {
			modes[rc.tool.c] = lossFor(rc)
		}
	}
	assert.Contains(t, modes, "ib_write_lat")
	for tool, m := range modes {
		want := lossAll
		if tool == "ib_write_lat" {
			want = lossSpareACKs
		}
		assert.Equal(t, want, m, tool)
	}
}

// perftest -R takes the tools' usual options, without -m (RDMA-CM negotiates the path MTU); the
// client names the server by its address of the case's family, and the case runs in the phase
// at MTU 1500.
func TestPerftestCMArgvs(t *testing.T) {
	rxe := &rxeEndpoint{v: &vm{n: 1, ip4: netip.MustParsePrefix("198.18.0.11/24"), ip6: netip.MustParsePrefix("fd67:6f72:7865::11/64")}}
	gx := &gorxeEndpoint{bin: "gorxe", dev: []string{"-d", "br"}}
	rc := c(withCM(writeBW), 4, 1024, 0, "-R", "-s", "65536", "-n", "100")
	srv, cli := toolArgvs(rc, rxe, gx, 1, 3, 18600)
	assert.Equal(t, "gorxe write_bw -d br -x 1 -p 18600 -F -R -s 65536 -n 100 --log-level=debug --counters", strings.Join(srv, " "))
	assert.Equal(t, "ib_write_bw -d rxe0 -i 1 -x 3 -p 18600 -F -R -s 65536 -n 100 "+hostIP4.Addr().String(), strings.Join(cli, " "))
	srv, cli = toolArgvs(c(withCM(sendLat), 6, 1024, 0, "-R"), gx, rxe, 2, 2, 18601)
	assert.Equal(t, "ib_send_lat -d rxe0 -i 1 -x 2 -p 18601 -F -R", strings.Join(srv, " "))
	assert.Equal(t, "gorxe send_lat -d br -x 2 -p 18601 -F -R --log-level=debug --counters fd67:6f72:7865::11", strings.Join(cli, " "))
	_, cli = toolArgvs(c(writeBW, 6, 1024, 0, "-n", "5"), gx, rxe, 2, 2, 18602)
	assert.Equal(t, "198.18.0.11", cli[len(cli)-1], "without -R the client reaches the server's TCP port over IPv4")
	assert.Equal(t, "ipv4 -R -s 65536 -n 100", describe(phase{}, rc))
	srv, cli = toolArgvs(c(withCM(sendBW), 4, 1024, 0, "-R", "-c", "UD", "-s", "1024"), rxe, gx, 1, 3, 18603)
	assert.Equal(t, "gorxe send_bw -d br -x 1 -p 18603 -F -R -c UD -s 1024 --log-level=debug --counters", strings.Join(srv, " "))
	assert.Equal(t, "ib_send_bw -d rxe0 -i 1 -x 3 -p 18603 -F -R -c UD -s 1024 "+hostIP4.Addr().String(), strings.Join(cli, " "))

	var runs []string
	for _, p := range gorxeMatrix() {
		for _, rc := range p.cases {
			if rc.tool.cm != nil && rc.tool.perftest && !rc.onLibrary {
				runs = append(runs, p.label+" "+rc.tool.c+" "+describe(p, rc))
			}
		}
	}
	assert.ElementsMatch(t, []string{
		"mtu1500 ib_write_bw ipv4 -R -s 65536 -n 100",
		"mtu1500 ib_read_bw ipv4 -R -s 65536 -n 100",
		"mtu1500 ib_send_lat ipv4 -R -s 2 -n 100",
		"mtu1500 ib_write_bw ipv4 -R -q 3 -s 65536 -n 50",
		"mtu1500 ib_send_bw ipv4 -R -s 65536 -n 100",
		"mtu1500 ib_write_lat ipv4 -R -s 2 -n 100",
		"mtu1500 ib_atomic_lat ipv4 -R -n 100",
		"mtu1500 ib_send_bw ipv4 -R -c UD -s 1024 -n 100",
		"mtu1500 ib_send_lat ipv4 -R -c UD -s 2 -n 100",
		"mtu1500 ib_send_bw ipv4 -R -c UD -s 1024 -n 5 -q 20",
		"mtu1500 ib_write_bw ipv4 -z -s 65536 -n 100",
		"mtu1500 ib_send_lat ipv4 -z -s 2 -n 100",
		"mtu1500 loss ib_write_bw ipv4 loss2%-no-acks -R -s 16384 -n 100 (gorxe: -u 18)",
		"mtu1500 loss ib_send_lat ipv4 loss2%-no-acks -R -s 2 -n 200 (gorxe: -u 18)",
	}, runs)
}

func TestLibraryArgvs(t *testing.T) {
	rxe := &rxeEndpoint{v: &vm{n: 1, ip4: netip.MustParsePrefix("198.18.0.11/24"), ip6: netip.MustParsePrefix("fd67:6f72:7865::11/64")}}
	lib := newLibEndpoint("/lib/dir")
	assert.Equal(t, []string{"LD_LIBRARY_PATH=/lib/dir", "GORXE_ADDR=" + bridgeName}, lib.env)
	rc := c(writeBW, 4, 4096, 0, "-s", "65536", "-n", "100")
	rc.onLibrary = true
	srv, cli := toolArgvs(rc, rxe, lib, 1, 1, 18600)
	assert.Equal(t, "ib_write_bw -d gorxe_"+bridgeName+" -i 1 -x 1 -p 18600 -m 4096 -F -s 65536 -n 100",
		strings.Join(srv, " "), "the C tool gets no gorxe-only options")
	assert.Equal(t, "ib_write_bw -d rxe0 -i 1 -x 1 -p 18600 -m 4096 -F -s 65536 -n 100 "+hostIP4.Addr().String(), strings.Join(cli, " "))
	srv, cli = toolArgvs(c(udPingpong, 4, 1024, 0, "-s", "1024"), lib, rxe, 1, 1, 18601)
	assert.Equal(t, "ibv_ud_pingpong -d rxe0 -i 1 -g 1 -p 18601 -s 1024", strings.Join(srv, " "))
	assert.Equal(t, "ibv_ud_pingpong -d gorxe_"+bridgeName+" -i 1 -g 1 -p 18601 -s 1024 198.18.0.11", strings.Join(cli, " "))
	assert.Equal(t, []string{"198.18.0.11", hostIP4.Addr().String()}, capturePeers(rc, lib, rxe))
	ud := c(sendBW, 4, 1024, 0, "-c", "UD", "-s", "1024")
	assert.Equal(t, []string{hostIP4.Addr().String()}, capturePeers(ud, lib, rxe), "a UD send_bw server only receives")
	ud.tool = withCM(sendBW)
	assert.Len(t, capturePeers(ud, lib, rxe), 2, "with -R the server answers the SIDR request")

	rc = c(rping, 4, 1024, 0, "-C", "10", "-v")
	rc.onLibrary = true
	srv, cli = cmArgvs(rc, rxe, lib, 18602)
	assert.Equal(t, "rping -s -a "+hostIP4.Addr().String()+" -p 18602 -C 10 -v", strings.Join(srv, " "),
		"the C server gets no gorxe-only options")
	assert.Equal(t, "rping -c -a "+hostIP4.Addr().String()+" -p 18602 -C 10 -v", strings.Join(cli, " "))
	rc = c(withCM(sendBW), 4, 1024, 0, "-R", "-c", "UD", "-s", "1024", "-n", "100")
	rc.onLibrary = true
	srv, cli = toolArgvs(rc, rxe, lib, 1, 1, 18603)
	assert.Equal(t, "ib_send_bw -d gorxe_"+bridgeName+" -i 1 -x 1 -p 18603 -F -R -c UD -s 1024 -n 100", strings.Join(srv, " "))
	assert.Equal(t, "ib_send_bw -d rxe0 -i 1 -x 1 -p 18603 -F -R -c UD -s 1024 -n 100 "+hostIP4.Addr().String(), strings.Join(cli, " "))
}

// TestLibraryCMToolArgvs: cmtime's server binds its address and its client names it, on the
// case's port; the library's mckey receiver gets none of gorxe's receiver options.
func TestLibraryCMToolArgvs(t *testing.T) {
	rxe := &rxeEndpoint{v: &vm{n: 1, ip4: netip.MustParsePrefix("198.18.0.11/24"), ip6: netip.MustParsePrefix("fd67:6f72:7865::11/64")}}
	lib := newLibEndpoint("/lib/dir")
	host := hostIP4.Addr().String()
	times := c(cmtime, 4, 1024, 0, "-c", "20")
	srv, cli := cmArgvs(times, rxe, lib, 18604)
	assert.Equal(t, "cmtime -b "+host+" -p 18604 -c 20", strings.Join(srv, " "))
	assert.Equal(t, "cmtime -s "+host+" -p 18604 -c 20", strings.Join(cli, " "))
	srv, cli = cmArgvs(times, lib, rxe, 18605)
	assert.Equal(t, "cmtime -b 198.18.0.11 -p 18605 -c 20", strings.Join(srv, " "))
	assert.Equal(t, "cmtime -s 198.18.0.11 -p 18605 -c 20", strings.Join(cli, " "))
	assert.Equal(t, 18605, cmtime.cm.listenPort(18605))

	mc := c(mckey, 4, 1024, 0, "-C", "10")
	srv, cli = cmArgvs(mc, rxe, lib, 18606)
	assert.Equal(t, "mckey -m 239.18.0.1 -b "+host+" -C 10", strings.Join(srv, " "))
	assert.Equal(t, "mckey -m 239.18.0.1 -s -b 198.18.0.11 -C 10", strings.Join(cli, " "))
	srv, cli = cmArgvs(mc, lib, rxe, 18607)
	assert.Equal(t, "mckey -m 239.18.0.1 -b 198.18.0.11 -C 10", strings.Join(srv, " "))
	assert.Equal(t, "mckey -m 239.18.0.1 -s -b "+host+" -C 10", strings.Join(cli, " "))
}

// TestCmtimeFailed: cmtime exits 0 whatever became of its connections, so its output is read for
// the lines of a failed one; a clean run's has none.
func TestCmtimeFailed(t *testing.T) {
	clean := "creating id\nresolving address\nresolving route\ncreating qp\nconnecting\ndisconnecting\n" +
		"destroying id\nstep              total ms     max ms     min us  us / conn\n" +
		"create id    :        0.91       0.88       0.00     181.40\n" +
		"disconnect   :        1.75       1.26     730.00     350.40\n" +
		"destroy      :        0.46       0.12      47.00      92.00\n"
	assert.Empty(t, cmtime.cm.failed.FindString(clean))
	assert.Contains(t, clean, c(cmtime, 4, 1024, 0).clientSays+"0.46", "the last row of the table")
	for _, line := range []string{
		"event: RDMA_CM_EVENT_REJECTED, error: 8",
		"RDMA_CM_EVENT_ADDR_ERROR, error: -110",
		"failure accepting: Invalid argument",
		"failing connection request",
	} {
		assert.NotEmpty(t, cmtime.cm.failed.FindString("connecting\n"+line+"\ndisconnecting\n"), line)
	}
}

// fakeJob is a server job that has ended (with result) or runs until killed.
type fakeJob struct {
	ended  bool
	result guestrpc.Result
	killed bool
}

func (j *fakeJob) kill() { j.killed, j.ended, j.result = true, true, guestrpc.Result{ExitCode: -1} }

func (j *fakeJob) wait(time.Duration) (guestrpc.Result, bool) { return j.result, j.ended }

// TestEndServer: a server ends by itself after a client that passed, unless it serves until it is
// stopped, when it must still be running and is killed; after a client that failed it is killed.
func TestEndServer(t *testing.T) {
	plain, serving := c(rping, 4, 1024, 0), c(cmtime, 4, 1024, 0)
	for _, tc := range []struct {
		name         string
		rc           runCase
		job          fakeJob
		clientPassed bool
		wantStopped  bool
		wantKilled   bool
		wantFailure  string
	}{
		{"ended", plain, fakeJob{ended: true}, true, false, false, ""},
		{"still running", plain, fakeJob{}, true, false, true, "server did not exit within 20s of the client"},
		{"client failed", plain, fakeJob{}, false, false, true, ""},
		{"serving", serving, fakeJob{}, true, true, true, ""},
		{"serving ended", serving, fakeJob{ended: true, result: guestrpc.Result{ExitCode: 139}}, true, false, false,
			"the server ended before it was stopped"},
		{"serving, client failed", serving, fakeJob{}, false, false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var failures []string
			fail := func(format string, args ...any) { failures = append(failures, fmt.Sprintf(format, args...)) }
			j := tc.job
			r, stopped := endServer(tc.rc, &j, tc.clientPassed, fail)
			assert.Equal(t, tc.wantStopped, stopped)
			assert.Equal(t, tc.wantKilled, j.killed)
			assert.Equal(t, j.result, r)
			if tc.wantFailure == "" {
				assert.Empty(t, failures)
			} else {
				assert.Equal(t, []string{tc.wantFailure}, failures)
			}
		})
	}
}

// TestLibraryCMListening: a C RDMA-CM server on the library is listening once its process has
// bound RoCE's UDP port; one that ends before it does never listened.
func TestLibraryCMListening(t *testing.T) {
	lib := newLibEndpoint("/lib/dir")
	quitter := hostJob{guestrpc.Start([]string{"true"}, nil, time.Minute)}
	ok, err := lib.cmListening(quitter, rping, 18602, time.Minute)
	assert.False(t, ok)
	assert.ErrorContains(t, err, "rping never bound UDP 4791")

	// This test binary, run as the helper below, binds the port (on an address of its own).
	binder := hostJob{guestrpc.Start([]string{os.Args[0], "-test.run=^TestHoldRoCEPort$"},
		[]string{envHoldRoCEPort + "=127.71.88.1"}, time.Minute)}
	defer binder.kill()
	ok, err = lib.cmListening(binder, rping, 18602, time.Minute)
	if !ok {
		r, _ := binder.wait(time.Second)
		require.Fail(t, fmt.Sprintf("the helper did not bind: %v\n%s", err, r.Output))
	}
}

// TestLibraryCases: the C tools on gorxe's library cover the pingpongs and perftest's RC and UD
// tools at both path MTUs, with IPv4 GIDs, in phases whose netdev MTU carries the path MTU, and
// the RDMA-CM tools (perftest's with -R) with IPv4 addresses.
func TestLibraryCases(t *testing.T) {
	var runs []string
	for _, p := range gorxeMatrix() {
		for _, rc := range p.cases {
			if !rc.onLibrary {
				continue
			}
			assert.True(t, !p.loss || rc.tool.cm != nil, "%s runs under loss on the library", rc.tool.c)
			assert.Empty(t, rc.gorxeOpts, "%s: the C tool takes no gorxe options", rc.tool.c)
			assert.GreaterOrEqual(t, p.netMTU, rc.pathMTU+100, "%s: the netdev MTU does not carry path MTU %d", rc.tool.c, rc.pathMTU)
			runs = append(runs, p.label+" "+rc.tool.c+" "+describe(p, rc))
		}
	}
	assert.ElementsMatch(t, []string{
		"mtu1500 ibv_rc_pingpong ipv4 mtu1024 -s 16384 -n 100",
		"mtu1500 ibv_ud_pingpong ipv4 mtu1024 -s 1024 -n 100",
		"mtu1500 ib_read_bw ipv4 mtu1024 -s 65536 -n 100",
		"mtu1500 ib_send_bw ipv4 mtu1024 -s 65536 -n 100",
		"mtu1500 ib_send_bw ipv4 mtu1024 -c UD -s 1024 -n 100",
		"mtu1500 ibv_uc_pingpong ipv4 mtu1024 -s 4096 -n 100",
		"mtu1500 ibv_srq_pingpong ipv4 mtu1024 -s 4096 -n 100",
		"mtu1500 ib_write_bw ipv4 mtu1024 -s 65536 -n 100",
		"mtu1500 ib_send_bw ipv4 mtu1024 -s 1 -n 200",
		"mtu1500 rping ipv4 -C 10 -v",
		"mtu1500 ucmatose ipv4 -C 10",
		"mtu1500 udaddy ipv4 -C 10",
		"mtu1500 rdma_server ipv4 ",
		"mtu1500 mckey ipv4 -C 10",
		"mtu1500 cmtime ipv4 -c 20",
		"mtu1500 ib_send_bw ipv4 -R -s 65536 -n 100",
		"mtu1500 ib_send_bw ipv4 -R -c UD -s 1024 -n 100",
		"mtu1500 ib_write_bw ipv4 -R -s 65536 -n 100",
		"mtu9000 ibv_rc_pingpong ipv4 mtu4096 -s 16384 -n 100",
		"mtu9000 ibv_ud_pingpong ipv4 mtu4096 -s 4096 -n 100",
		"mtu9000 ib_read_bw ipv4 mtu4096 -s 65536 -n 100",
		"mtu9000 ib_send_bw ipv4 mtu4096 -s 65536 -n 100",
		"mtu9000 ib_send_bw ipv4 mtu4096 -c UD -s 4096 -n 100",
		"mtu9000 ib_write_bw ipv4 mtu4096 -s 1048576 -n 20",
		"mtu1500 loss rping ipv4 loss2%-no-acks+25%-mads -C 10 -v",
	}, runs)
}

// TestLibraryNotBuilt: without the library every case of it fails, the first with the build's
// error, and none is left out.
func TestLibraryNotBuilt(t *testing.T) {
	s := &suite{o: &options{libErr: "building gorxe's C library: no cc"}}
	assert.False(t, s.libraryBuilt("ib_write_bw", "clib->rxe", "a"))
	assert.False(t, s.libraryBuilt("ib_write_bw", "rxe->clib", "a"))
	require.Len(t, s.rows, 2)
	assert.Equal(t, row{tool: "ib_write_bw", role: "clib->rxe", options: "a", detail: "building gorxe's C library: no cc"}, s.rows[0])
	assert.False(t, s.rows[1].pass)
	assert.Contains(t, s.rows[1].detail, "not run")
	assert.True(t, (&suite{o: &options{libDir: "/lib/dir"}}).libraryBuilt("x", "y", "z"))
}

// envHoldRoCEPort makes TestHoldRoCEPort bind RoCE's UDP port on the address it names and wait.
const envHoldRoCEPort = "GORXE_INTEROP_TEST_HOLD_ROCE_PORT"

// TestHoldRoCEPort is TestLibraryCMListening's stand-in for a server, a process that binds UDP
// 4791 and holds it until it is killed; run directly, it does nothing.
func TestHoldRoCEPort(t *testing.T) {
	addr := os.Getenv(envHoldRoCEPort)
	if addr == "" {
		t.Skip("a helper process of TestLibraryCMListening")
	}
	conn, err := net.ListenPacket("udp", fmt.Sprintf("%s:%d", addr, roceUDP))
	require.NoError(t, err)
	defer conn.Close()
	_, _, err = conn.ReadFrom(make([]byte, 1)) // until killed
	require.NoError(t, err)
}

// TestReadStats counts READ responses sent twice (same QP and PSN) once among the packets needed.
func TestReadStats(t *testing.T) {
	r := &readStats{seen: map[[2]uint32]bool{}}
	for _, p := range []struct {
		qpn, psn uint32
		n        int
	}{{17, 100, 1024}, {17, 101, 1024}, {17, 101, 1024}, {18, 101, 512}, {17, 100, 1024}, {17, 102, 8}} {
		r.add(p.qpn, p.psn, p.n)
	}
	assert.Equal(t, 6, r.Packets, "packets")
	assert.Equal(t, 4, r.Needed, "needed")
	assert.Equal(t, int64(1024+1024+512+8), r.Bytes, "bytes read")
	assert.Equal(t, "6 pkts for 4 needed (1.50x, 2450 per MiB read)", r.String())
	assert.True(t, isReadResponse(0x0D) && isReadResponse(0x10), "FIRST and ONLY are READ responses")
	assert.False(t, isReadResponse(0x0C) || isReadResponse(0x11), "a READ request and an ACK are not")
}

// TestRefusals reads real runs in which perftest's client on gorxe's C library connected before
// its kernel server listened: the kernel's answer is the one refusal the runner reruns for.
func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		file     string
		refusals map[string]int
		bySrc    map[string]int
	}{
		// ib_send_bw -R -c UD: the SIDR_REP to the test QP's SIDR_REQ has status 1.
		{"perftest-ud-early-connect.pcap", map[string]int{"198.18.0.11": 1}, map[string]int{"198.18.0.1": 13, "198.18.0.11": 13}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open("testdata/" + tc.file)
			require.NoError(t, err)
			defer f.Close()
			var out, errOut bytes.Buffer
			_, err = dump.Run(&out, &errOut, f, dump.FormatJSON)
			require.NoError(t, err)
			require.Empty(t, errOut.String())
			cc := readDump(&out)
			assert.Empty(t, cc.Errors)
			assert.Equal(t, tc.refusals, cc.Refusals)
			assert.Equal(t, tc.bySrc, cc.BySrc)
		})
	}
}

// Only a perftest -R client that failed against a kernel server which refused a connection is
// run again; every other failure is reported.
func TestConnectedEarly(t *testing.T) {
	for _, tc := range []struct {
		name       string
		tool       tool
		server     string
		clientExit int
		refusals   int
		want       bool
	}{
		{"perftest -R refused by rxe", withCM(sendBW), "rxe", 1, 1, true},
		{"client passed", withCM(sendBW), "rxe", 0, 1, false},
		{"no refusal in the capture", withCM(sendBW), "rxe", 1, 0, false},
		{"gorxe server", withCM(sendBW), "gorxe", 1, 1, false},
		{"perftest without -R", sendBW, "rxe", 1, 1, false},
		{"an RDMA-CM tool", rping, "rxe", 1, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, connectedEarly(tc.tool, tc.server, tc.clientExit, tc.refusals))
		})
	}
}
