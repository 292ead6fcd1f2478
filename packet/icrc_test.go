package packet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceICRC is the ICRC written the slow, obvious way from a real IP
// header: copy 0xFF x 8 and the headers, mask, CRC the lot.
func referenceICRC(ipUDP, pkt []byte) uint32 {
	m := append(bytes.Repeat([]byte{0xFF}, 8), ipUDP...)
	ip := m[8:]
	if ip[0]>>4 == 4 {
		ip[1], ip[8], ip[10], ip[11] = 0xFF, 0xFF, 0xFF, 0xFF
	} else {
		ip[0] |= 0x0F
		ip[1], ip[2], ip[3], ip[7] = 0xFF, 0xFF, 0xFF, 0xFF
	}
	m[len(m)-2], m[len(m)-1] = 0xFF, 0xFF // UDP checksum
	bth := len(m)
	m = append(m, pkt[:len(pkt)-ICRCSize]...)
	m[bth+4] = 0xFF
	return crc32.ChecksumIEEE(m)
}

func TestCRCOfFFx8(t *testing.T) {
	got := crc32.ChecksumIEEE(bytes.Repeat([]byte{0xFF}, 8))
	require.Equal(t, uint32(crcOfFFx8), got, "CRC of 0xFF x 8 = %#x, constant says %#x", got, uint32(crcOfFFx8))
	// The kernel's seed is the register after those bytes, before inversion.
	require.Equal(t, uint32(0xdebb20e3), ^uint32(crcOfFFx8), "seed mismatch")
}

func TestGoldenICRC(t *testing.T) {
	for _, g := range golden(t) {
		require.NoError(t, g.env.VerifyICRC(g.pkt), "frame %d: exact ICRC", g.frame)
		hdr, err := g.env.AppendHeaders(nil, len(g.pkt))
		require.NoError(t, err)
		want := binary.LittleEndian.Uint32(g.pkt[len(g.pkt)-ICRCSize:])
		ref := referenceICRC(hdr, g.pkt)
		require.Equal(t, want, ref, "frame %d: reference ICRC %#x, wire %#x", g.frame, ref, want)
		id, flags, err := VerifyICRCIPv4AnyID(g.env.Src, g.env.Dst, g.pkt)
		require.NoError(t, err, "frame %d: any-ID ICRC", g.frame)
		require.Equal(t, g.env.IPID, id, "frame %d: solved ID %#04x flags %d, capture has %#04x/%d", g.frame, id, flags, g.env.IPID, g.env.IPFlags)
		require.Equal(t, g.env.IPFlags, flags, "frame %d: solved ID %#04x flags %d, capture has %#04x/%d", g.frame, id, flags, g.env.IPID, g.env.IPFlags)
		c := bytes.Clone(g.pkt)
		clear(c[len(c)-ICRCSize:])
		if err := g.env.PutICRC(c); err != nil || !bytes.Equal(c, g.pkt) {
			require.Fail(t, fmt.Sprintf("frame %d: PutICRC gave % x (%v)", g.frame, c[len(c)-ICRCSize:], err))
		}
	}
}

func TestGoldenHeadersReencode(t *testing.T) {
	// Re-encoding the parsed envelope must reproduce the capture's IP and
	// UDP headers byte for byte (checksum included).
	raw, err := readPcapngFile(t)
	require.NoError(t, err)
	for i, f := range raw {
		ip, err := etherPayload(f)
		require.NoError(t, err)
		env, pkt, err := ParseEnvelope(ip)
		require.NoError(t, err)
		hdr, err := env.AppendHeaders(nil, len(pkt))
		require.NoError(t, err)
		require.Equal(t, ip[:len(hdr)], hdr, "frame %d: headers\n% x\nwant\n% x", i+1, hdr, ip[:len(hdr)])
	}
}

// Single-bit flips of covered bytes must fail the exact check; changes of
// masked fields must not.
func TestICRCCoverage(t *testing.T) {
	envs := []Envelope{
		golden(t)[3].env,
		{
			Src: netip.MustParseAddrPort("[fd00::2]:49153"), Dst: netip.MustParseAddrPort("[fd00::3]:4791"),
			TrafficClass: 0x12, HopLimit: 64, FlowLabel: 0xABCDE,
		},
	}
	for _, env := range envs {
		var pkt []byte
		if env.Src.Addr().Is4() {
			pkt = bytes.Clone(golden(t)[3].pkt) // RC_SEND_LAST with payload
		} else {
			var err error
			pkt, err = AppendPacket(nil, &Headers{
				BTH:  BTHFields{Opcode: RCRDMAWriteFirst, PKey: 0xFFFF, DestQP: 0x11, PSN: 0xFFFFFF},
				RETH: RETHFields{VirtualAddress: 0x7f00_1234_5000, RKey: 0x1234, DMALength: 4096},
			}, []byte("sixty-four bytes of payload, give or take a few; pad me please!!"))
			require.NoError(t, err)
			require.NoError(t, env.PutICRC(pkt))
		}
		hdr, err := env.AppendHeaders(nil, len(pkt))
		require.NoError(t, err)
		frame := append(bytes.Clone(hdr), pkt...)
		verify := func(f []byte) error {
			e, p, err := ParseEnvelope(f)
			if err != nil {
				return err
			}
			return e.VerifyICRC(p)
		}
		require.NoError(t, verify(frame), "%v: unmodified packet", env.Src)
		ipLen := len(hdr) - UDPHeaderSize
		masked := map[int]byte{}
		if ipLen == IPv4HeaderSize {
			for _, m := range []struct {
				off  int
				bits byte
			}{{1, 0xFF}, {8, 0xFF}, {10, 0xFF}, {11, 0xFF}} {
				masked[m.off] = m.bits
			}
		} else {
			for _, m := range []struct {
				off  int
				bits byte
			}{{0, 0x0F}, {1, 0xFF}, {2, 0xFF}, {3, 0xFF}, {7, 0xFF}} {
				masked[m.off] = m.bits
			}
		}
		masked[ipLen+6], masked[ipLen+7] = 0xFF, 0xFF // UDP checksum
		masked[len(hdr)+4] = 0xFF                     // FECN, BECN, resv6a
		for i := range frame[:len(frame)-ICRCSize] {
			for bit := range 8 {
				f := bytes.Clone(frame)
				f[i] ^= 1 << bit
				err := verify(f)
				if masked[i]>>bit&1 != 0 {
					assert.NoError(t, err, "%v: flipping masked byte %d bit %d", env.Src, i, bit)
				} else if err == nil {
					assert.Fail(t, fmt.Sprintf("%v: flipping covered byte %d bit %d still verifies", env.Src, i, bit))
				}
			}
		}
		// The packet alone, through the exact verifier, with the ICRC too.
		for i := range pkt {
			for bit := range 8 {
				p := bytes.Clone(pkt)
				p[i] ^= 1 << bit
				if i == bthECN {
					continue // FECN, BECN, resv6a: masked, checked above
				}
				if err := env.VerifyICRC(p); !errors.Is(err, ErrBadICRC) {
					assert.Fail(t, fmt.Sprintf("%v: packet byte %d bit %d: %v", env.Src, i, bit, err))
				}
			}
		}
	}
}

func TestICRCAnyIDRandomised(t *testing.T) {
	r := rand.New(rand.NewSource(42))
	src := netip.MustParseAddrPort("10.0.0.1:49999")
	dst := netip.MustParseAddrPort("10.0.0.2:4791")
	falseAccepts, trials := 0, 0
	for _, n := range []int{0, 1, 4, 60, 255, 256, 257, 1024, 4096, 65480} {
		payload := make([]byte, n)
		r.Read(payload)
		pkt, err := AppendPacket(nil, &Headers{BTH: BTHFields{Opcode: UDSendOnly, PKey: 0xFFFF, DestQP: 1, PSN: 7}, DETH: DETHFields{QKey: GSIQKey, SrcQP: 1}}, payload)
		require.NoError(t, err)
		for range 20 {
			env := Envelope{Src: src, Dst: dst, IPID: uint16(r.Uint32()), IPFlags: IPv4Flags(r.Intn(4))}
			require.NoError(t, env.PutICRC(pkt), "%d bytes", len(pkt))
			id, flags, err := VerifyICRCIPv4AnyID(src, dst, pkt)
			require.NoError(t, err, "%d bytes, ID %#x flags %d: solved %#x %d %v", len(pkt), env.IPID, env.IPFlags, id, flags, err)
			require.Equal(t, env.IPID, id, "%d bytes, ID %#x flags %d: solved %#x %d %v", len(pkt), env.IPID, env.IPFlags, id, flags, err)
			require.Equal(t, env.IPFlags, flags, "%d bytes, ID %#x flags %d: solved %#x %d %v", len(pkt), env.IPID, env.IPFlags, id, flags, err)
			// IPv4-mapped addresses mean the same packet.
			if _, _, err := VerifyICRCIPv4AnyID(
				netip.AddrPortFrom(netip.AddrFrom16(src.Addr().As16()), src.Port()),
				netip.AddrPortFrom(netip.AddrFrom16(dst.Addr().As16()), dst.Port()), pkt); err != nil {
				require.Fail(t, fmt.Sprintf("mapped addresses: %v", err))
			}
			// A random corruption is caught unless it happens to look like an ID
			// change: about 2^-14 of the time.
			c := bytes.Clone(pkt)
			c[BTHSize+r.Intn(len(c)-BTHSize)] ^= byte(1 + r.Intn(255))
			trials++
			if _, _, err := VerifyICRCIPv4AnyID(src, dst, c); err == nil {
				falseAccepts++
			} else if !errors.Is(err, ErrBadICRC) {
				require.Fail(t, fmt.Sprint(err))
			}
			if err := env.VerifyICRC(c); !errors.Is(err, ErrBadICRC) {
				require.Fail(t, fmt.Sprintf("exact verifier accepted a corrupted packet: %v", err))
			}
		}
	}
	assert.LessOrEqual(t, falseAccepts, 1, "any-ID verifier accepted %d of %d corrupted packets", falseAccepts, trials)
}

// The solver's base is ID 0 with DF, what gorxe sends; the IDs and flags around it solve as well.
func TestICRCAnyIDAroundBase(t *testing.T) {
	src := netip.MustParseAddrPort("10.0.0.1:49999")
	dst := netip.MustParseAddrPort("10.0.0.2:4791")
	pkt := mustAppend(t, &Headers{BTH: BTHFields{Opcode: RCSendOnly, PKey: 0xFFFF, DestQP: 9, PSN: 3}}, []byte("payload"))
	for _, id := range []uint16{0, 1, 0x8000, 0xFFFF} {
		for flags := IPv4Flags(0); flags < 4; flags++ {
			env := Envelope{Src: src, Dst: dst, IPID: id, IPFlags: flags}
			require.NoError(t, env.PutICRC(pkt))
			gotID, gotFlags, err := VerifyICRCIPv4AnyID(src, dst, pkt)
			assert.NoError(t, err, "ID %#x flags %d: solved %#x %d %v", id, flags, gotID, gotFlags, err)
			assert.Equal(t, id, gotID, "ID %#x flags %d: solved %#x %d %v", id, flags, gotID, gotFlags, err)
			assert.Equal(t, flags, gotFlags, "ID %#x flags %d: solved %#x %d %v", id, flags, gotID, gotFlags, err)
		}
	}
}

func TestICRCAnyIDRejectsFlipsMostly(t *testing.T) {
	// Every single-bit flip of a packet: accepted flips must correspond to a
	// different ID (never the real one), and be rare.
	g := golden(t)[3]
	accepted, total := 0, 0
	for i := range g.pkt {
		for bit := range 8 {
			if i == 4 {
				continue // masked byte
			}
			p := bytes.Clone(g.pkt)
			p[i] ^= 1 << bit
			total++
			id, flags, err := VerifyICRCIPv4AnyID(g.env.Src, g.env.Dst, p)
			if err == nil {
				accepted++
				assert.False(t, id == g.env.IPID && flags == g.env.IPFlags, "byte %d bit %d: accepted with the true ID", i, bit)
			}
		}
	}
	// expected ~ total/16384
	assert.LessOrEqual(t, accepted*1000, total, "%d of %d single-bit flips accepted", accepted, total)
}

// VerifyICRCIPv4AnyIDNear accepts exactly what VerifyICRCIPv4AnyID accepts, with the same ID and
// flags, whatever ID it expects: real packets of kernel rxe (varying IDs) and every single-bit
// flip of them, expecting their own ID, the next, none (0) and the last.
func TestICRCAnyIDNearAcceptsTheSame(t *testing.T) {
	flips := 0
	for _, g := range golden(t)[:4] {
		for i := -1; i < len(g.pkt); i++ {
			for bit := range 8 {
				p := g.pkt
				if i >= 0 {
					p = bytes.Clone(g.pkt)
					p[i] ^= 1 << bit
				} else if bit > 0 {
					break
				}
				id, flags, err := VerifyICRCIPv4AnyID(g.env.Src, g.env.Dst, p)
				if i < 0 {
					require.NoError(t, err)
					require.Equal(t, g.env.IPID, id)
				}
				for _, near := range []uint16{g.env.IPID, g.env.IPID + 1, 0, 0xFFFF} {
					nid, nflags, nerr := VerifyICRCIPv4AnyIDNear(g.env.Src, g.env.Dst, p, near)
					require.Equal(t, err, nerr, "byte %d bit %d, expecting ID %#x", i, bit, near)
					if err == nil {
						require.Equal(t, id, nid, "byte %d bit %d, expecting ID %#x", i, bit, near)
						require.Equal(t, flags, nflags, "byte %d bit %d, expecting ID %#x", i, bit, near)
					}
				}
				flips++
			}
		}
	}
	require.Greater(t, flips, 1000)
}

func TestICRCErrors(t *testing.T) {
	v4 := Envelope{Src: netip.MustParseAddrPort("10.0.0.1:1"), Dst: netip.MustParseAddrPort("10.0.0.2:4791")}
	mixed := Envelope{Src: netip.MustParseAddrPort("10.0.0.1:1"), Dst: netip.MustParseAddrPort("[fd00::1]:4791")}
	var zero Envelope
	ok := mustAppend(t, &Headers{BTH: BTHFields{Opcode: RCAcknowledge}}, nil)
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"short", v4.VerifyICRC(ok[:MinSize-1]), ErrTruncated},
		{"short put", v4.PutICRC(make([]byte, 3)), ErrTruncated},
		{"mixed", mixed.VerifyICRC(ok), ErrAddressFamily},
		{"zero", zero.VerifyICRC(ok), ErrAddressFamily},
		{"too long", v4.VerifyICRC(make([]byte, maxIPv4Payload+1)), ErrTooLong},
		{"bad icrc", v4.VerifyICRC(ok), ErrBadICRC},
	}
	_, _, err := VerifyICRCIPv4AnyID(mixed.Src, mixed.Dst, ok)
	cases = append(cases, struct {
		name string
		err  error
		want error
	}{"any-ID mixed", err, ErrAddressFamily})
	_, _, err = VerifyICRCIPv4AnyID(netip.MustParseAddrPort("[fd00::1]:1"), netip.MustParseAddrPort("[fd00::2]:1"), ok)
	cases = append(cases, struct {
		name string
		err  error
		want error
	}{"any-ID v6", err, ErrAddressFamily})
	_, _, err = VerifyICRCIPv4AnyID(v4.Src, v4.Dst, ok[:5])
	cases = append(cases, struct {
		name string
		err  error
		want error
	}{"any-ID short", err, ErrTruncated})
	for _, c := range cases {
		assert.ErrorIs(t, c.err, c.want, "%s: got %v, want %v", c.name, c.err, c.want)
	}
}

func TestGoldenPrefixesFailICRC(t *testing.T) {
	// Every proper prefix of every golden packet fails Parse or the ICRC.
	// Packets of the same opcode and length differ only in field values, so
	// one of each shape is swept under -short.
	var p Parsed
	type shape struct {
		op  byte
		len int
	}
	seen := map[shape]bool{}
	for _, g := range golden(t) {
		k := shape{g.pkt[0], len(g.pkt)}
		if testing.Short() && seen[k] {
			continue
		}
		seen[k] = true
		for i := range g.pkt {
			pre := g.pkt[:i]
			if Parse(pre, &p) != nil {
				continue
			}
			require.Error(t, g.env.VerifyICRC(pre), "frame %d: %d-byte prefix passes Parse and the ICRC", g.frame, i)
		}
	}
}

func TestGF(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	x8 := gfOne >> 8
	for range 1000 {
		v := r.Uint32()
		// One zero byte through the CRC register is multiplication by x^8.
		z := ^crc32.Update(^v, crc32.IEEETable, []byte{0})
		got := gfMul(v, x8)
		require.Equal(t, z, got, "gfMul(%#x, x^8) = %#x, register gives %#x", v, got, z)
		require.Equal(t, v, gfMul(gfMul(v, gfInvX), gfOne>>1), "x^-1 * x != 1 for %#x", v)
	}
	tab := anyIDSolver()
	for _, n := range []int{0, 1, 255, 256, 300, 65535} {
		k := gfMul(tab.unshiftLo[n&0xFF], tab.unshiftHi[n>>8])
		v := r.Uint32()
		z := ^crc32.Update(^gfMul(v, k), crc32.IEEETable, make([]byte, n))
		require.Equal(t, v, z, "unshift by %d then %d zero bytes: %#x != %#x", n, n, z, v)
	}
	// E B = [I;0]: every column of B maps to its unit vector.
	for j := range anyIDUnknowns {
		c := anyIDColumn(j)
		x := tab.solve[0][byte(c)] ^ tab.solve[1][byte(c>>8)] ^ tab.solve[2][byte(c>>16)] ^ tab.solve[3][byte(c>>24)]
		require.Equal(t, uint32(1<<j), x, "E b_%d = %#x", j, x)
	}
}

func readPcapngFile(t *testing.T) ([]frame, error) {
	t.Helper()
	raw, err := readFile(goldenPcapng)
	if err != nil {
		return nil, err
	}
	return readPcapng(raw)
}

func TestUpdateSmall(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for n := range 100 {
		p := make([]byte, n)
		r.Read(p)
		seed := r.Uint32()
		got, want := updateSmall(seed, p), crc32.Update(seed, crc32.IEEETable, p)
		require.Equal(t, want, got, "%d bytes: %#x, want %#x", n, got, want)
	}
}

// The whole-T table the solver uses for RoCE-sized packets agrees with the two-table product it
// uses beyond them.
func TestICRCAnyIDUnshiftTable(t *testing.T) {
	sv := anyIDSolver()
	for i := range anyIDDirect {
		require.Equal(t, gfMul(sv.unshiftLo[i&0xFF], sv.unshiftHi[i>>8&0xFF]), sv.unshift[i], "T=%d", i)
	}
}
