package netio

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// sockaddrBytes is the raw memory of a socket address as the kernel writes it.
func sockaddrBytes(ap netip.AddrPort, scope uint32) []byte {
	var sa unix.RawSockaddrInet6
	n := putSockaddr(&sa, ap, scope)
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unix.SizeofSockaddrInet6)[:n]...)
}

// FuzzSockaddr decodes arbitrary bytes as a received source address: it never panics, anything
// of a family other than AF_INET and AF_INET6 decodes to the zero address, and what decodes
// re-encodes to a socket address that decodes the same. An AF_INET address decodes to IPv4
// with the port read big-endian.
func FuzzSockaddr(f *testing.F) {
	for _, ap := range []string{"127.0.0.1:4791", "10.99.0.2:49152", "[::1]:4791", "[fe80::1]:4791", "[::ffff:10.0.0.1]:1", "[ff02::1]:0"} {
		f.Add(sockaddrBytes(netip.MustParseAddrPort(ap), 2))
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var sa unix.RawSockaddrInet6
		raw := unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unix.SizeofSockaddrInet6)
		copy(raw, b)
		got := getSockaddr(&sa)
		switch sa.Family {
		case unix.AF_INET:
			require.True(t, got.Addr().Is4(), "%v", got)
			require.Equal(t, uint16(raw[2])<<8|uint16(raw[3]), got.Port())
			require.Equal(t, [4]byte(raw[4:8]), got.Addr().As4())
		case unix.AF_INET6:
			require.True(t, got.Addr().Is6(), "%v", got)
			require.Equal(t, [16]byte(sa.Addr), got.Addr().As16())
		default:
			require.Equal(t, netip.AddrPort{}, got)
			return
		}
		var back unix.RawSockaddrInet6
		putSockaddr(&back, got, 0)
		require.Equal(t, netip.AddrPortFrom(got.Addr().Unmap(), got.Port()), getSockaddr(&back))
	})
}

// groCmsg is the control message the kernel attaches to a coalesced read: UDP_GRO with the
// segment size as an int.
func groCmsg(seg int32) []byte {
	b := make([]byte, unix.CmsgSpace(4))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = unix.SOL_UDP, unix.UDP_GRO
	h.SetLen(unix.CmsgLen(4))
	binary.NativeEndian.PutUint32(b[unix.CmsgLen(0):], uint32(seg))
	return b
}

// tosCmsg is an IP_TOS control message, one the socket could receive before UDP_GRO's.
func tosCmsg(tos byte) []byte {
	b := make([]byte, unix.CmsgSpace(1))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = unix.SOL_IP, unix.IP_TOS
	h.SetLen(unix.CmsgLen(1))
	b[unix.CmsgLen(0)] = tos
	return b
}

// FuzzGROSegment walks arbitrary control buffers: groSegment never reads past the control
// length or the buffer, and on every buffer the standard parser accepts it reports the first
// UDP_GRO message's segment size (0 without one).
func FuzzGROSegment(f *testing.F) {
	f.Add(groCmsg(1024), uint16(unix.CmsgSpace(4)))
	f.Add(append(tosCmsg(0x02), groCmsg(4136)...), uint16(unix.CmsgSpace(1)+unix.CmsgSpace(4)))
	f.Add(tosCmsg(0), uint16(unix.CmsgSpace(1)))
	f.Add(groCmsg(1024), uint16(3))
	f.Add([]byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, oob []byte, controllen uint16) {
		b := newReceiveBatch()
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&b.oob[0][0])), cmsgWords*8)
		copy(buf, oob)
		b.hdrs[0].Hdr.Control = &buf[0]
		b.hdrs[0].Hdr.SetControllen(int(controllen))
		got := b.groSegment(0)

		valid := buf[:min(int(controllen), len(buf))]
		msgs, err := unix.ParseSocketControlMessage(valid)
		if err != nil {
			return // malformed: any answer is fine as long as nothing panicked
		}
		want := 0
		for _, m := range msgs {
			if m.Header.Level == unix.SOL_UDP && m.Header.Type == unix.UDP_GRO && len(m.Data) >= 4 {
				want = int(int32(binary.NativeEndian.Uint32(m.Data)))
				break
			}
		}
		require.Equal(t, want, got, "control %x (length %d)", valid, controllen)
	})
}

// FuzzGROHandOut fills a GRO reader's slots as a recvmmsg call would (a datagram or a run of
// segments per slot, with or without a UDP_GRO message, truncated or not) and hands them out in
// batches of arbitrary size into buffers of arbitrary capacity. Every byte of every untruncated
// slot comes out in order, cut at the segment size, each datagram either delivered whole with
// its source and segment size or counted as truncated, and the counters agree.
func FuzzGROHandOut(f *testing.F) {
	// slots: per slot 5 bytes: size (2), segment (2), flags (1: bit 0 truncated, bit 1 no cmsg).
	f.Add([]byte{0x00, 0x10, 0x00, 0x04, 0}, uint16(4200), uint8(64))                           // 4096 in 1024-byte segments
	f.Add([]byte{0x10, 0x28, 0x04, 0x38, 0, 0x00, 0x2c, 0, 0, 2}, uint16(4200), uint8(3))       // 4136-byte segments, then a single datagram
	f.Add([]byte{0x00, 0x10, 0x00, 0x04, 1, 0x00, 0x08, 0x00, 0x10, 0}, uint16(1024), uint8(1)) // truncated slot, nonsense segment
	f.Add([]byte{0x01, 0x10, 0x00, 0x04, 0, 0x00, 0x00, 0x00, 0x00, 2}, uint16(512), uint8(2))  // short last segment, an empty datagram
	f.Fuzz(func(t *testing.T, spec []byte, bufCap uint16, batch uint8) {
		slots := min(len(spec)/5, 4)
		if slots == 0 {
			return
		}
		r := newGROReader(slots)
		r.mem = make([]byte, slots*groSlotSize) // as the first read into its own slots makes it
		c := &UDPConn{}
		s := &udpSocket{local: netip.MustParseAddrPort("[fe80::2%lo]:4791")}
		src := netip.MustParseAddrPort("[fe80::1]:49152")
		type dgram struct {
			data []byte
			seg  uint16
		}
		var want []dgram
		truncated := 0
		for i := range slots {
			p := spec[i*5 : i*5+5]
			size := int(binary.LittleEndian.Uint16(p[0:2]))
			seg := int(int16(binary.LittleEndian.Uint16(p[2:4])))
			data := r.mem[i*groSlotSize : i*groSlotSize+size]
			for j := range data {
				data[j] = byte(i*7 + j)
			}
			h := &r.b.hdrs[i]
			h.Len = uint32(size)
			h.Hdr.Flags = 0
			if p[4]&1 != 0 {
				h.Hdr.Flags = unix.MSG_TRUNC
			}
			if p[4]&2 != 0 {
				h.Hdr.SetControllen(0)
			} else {
				cm := groCmsg(int32(seg))
				copy(unsafe.Slice((*byte)(unsafe.Pointer(&r.b.oob[i][0])), cmsgWords*8), cm)
				h.Hdr.SetControllen(len(cm))
			}
			putSockaddr(&r.b.names[i], src, 0)
			if p[4]&1 != 0 {
				truncated++
				continue
			}
			if p[4]&2 != 0 || seg <= 0 || seg > size {
				seg = size
			}
			for off := 0; ; off += seg {
				end := min(off+seg, size)
				d := dgram{data: data[off:end]}
				if seg < size {
					d.seg = uint16(seg)
				}
				want = append(want, d)
				if end >= size {
					break
				}
			}
		}
		r.got, r.slot, r.off = slots, 0, 0

		msgs := make([]Message, max(int(batch%8), 1))
		for i := range msgs {
			msgs[i].Buf = make([]byte, 0, int(bufCap))
		}
		var got []dgram
		for r.slot < r.got {
			n := c.handOut(s, r, msgs)
			require.LessOrEqual(t, n, len(msgs))
			for _, m := range msgs[:n] {
				require.Equal(t, s.source(src), m.Src)
				require.Equal(t, s.local, m.Dst)
				got = append(got, dgram{data: append([]byte(nil), m.Buf...), seg: m.SegmentSize})
			}
		}
		var delivered []dgram
		var bytes uint64
		for _, d := range want {
			if len(d.data) > int(bufCap) {
				truncated++
				continue
			}
			delivered = append(delivered, dgram{data: append([]byte(nil), d.data...), seg: d.seg})
			bytes += uint64(len(d.data))
		}
		require.Equal(t, len(delivered), len(got))
		for i := range delivered {
			assert.Equal(t, delivered[i], got[i], "datagram %d", i)
		}
		cs := c.counters.snapshot()
		require.Equal(t, uint64(len(delivered)), cs.ReceivedDatagrams)
		require.Equal(t, bytes, cs.ReceivedBytes)
		require.Equal(t, uint64(truncated), cs.Drops[DropTruncated])
	})
}
