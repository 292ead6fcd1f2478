package perftest

import (
	"encoding/binary"
	"fmt"
)

// KeyLenCM is the key message of an exchange over RDMA-CM (-R, -z). perftest does not format it
// as text there: it sends its struct pingpong_dest as it lies in memory, with every integer
// converted to big-endian first (perftest's HAVE_ENDIAN, set by every Linux build). On the 64-bit
// ABIs the struct is 56 bytes:
//
//	0 lid, 4 out_reads, 8 qpn, 12 psn, 16 rkey   32-bit each
//	20 padding                                    4 bytes (perftest leaves them uninitialised)
//	24 vaddr                                      64-bit
//	32 gid                                        16 bytes
//	48 srqn, 52 gid_index                         32-bit each
//
// perftest 26.04 inserted a 64-bit tail_markers_vaddr after vaddr, which moves the GID: it cannot
// exchange keys over RDMA-CM with earlier perftest versions, nor with gorxe, which follows the
// layout of every release before it.
const KeyLenCM = 56

// AppendKeyCM appends d as a key message of the RDMA-CM exchange, with zero padding.
func AppendKeyCM(dst []byte, d *Dest) []byte {
	var b [KeyLenCM]byte
	binary.BigEndian.PutUint32(b[0:], uint32(d.LID))
	binary.BigEndian.PutUint32(b[4:], uint32(d.OutReads))
	binary.BigEndian.PutUint32(b[8:], d.QPN)
	binary.BigEndian.PutUint32(b[12:], d.PSN)
	binary.BigEndian.PutUint32(b[16:], d.RKey)
	binary.BigEndian.PutUint64(b[24:], d.VAddr)
	copy(b[32:48], d.GID[:])
	binary.BigEndian.PutUint32(b[48:], d.SRQN)
	binary.BigEndian.PutUint32(b[52:], uint32(int32(d.GIDIndex)))
	return append(dst, b[:]...)
}

// ParseKeyCM reads a key message of the RDMA-CM exchange. perftest's reader takes the LID, the
// outstanding reads, the QPN, PSN, rkey, address and GID and ignores the rest; so does ParseKeyCM,
// except that it keeps the 24-bit fields within their width.
func ParseKeyCM(b []byte) (Dest, error) {
	if len(b) != KeyLenCM {
		return Dest{}, fmt.Errorf("%w: key message of %d bytes, want %d", ErrBadMessage, len(b), KeyLenCM)
	}
	d := Dest{
		LID:      uint16(binary.BigEndian.Uint32(b[0:])),
		OutReads: int(binary.BigEndian.Uint32(b[4:]) & 0xffff),
		QPN:      binary.BigEndian.Uint32(b[8:]) & 0xffffff,
		PSN:      binary.BigEndian.Uint32(b[12:]) & 0xffffff,
		RKey:     binary.BigEndian.Uint32(b[16:]),
		VAddr:    binary.BigEndian.Uint64(b[24:]),
	}
	copy(d.GID[:], b[32:48])
	return d, nil
}
