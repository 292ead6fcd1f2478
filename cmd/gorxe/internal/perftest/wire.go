package perftest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/gorxe/gorxe"
)

// Sizes of the out-of-band messages perftest exchanges over its TCP connection. Each exchange is
// symmetric: the client writes and then reads, the server reads and then writes, the same size.
const (
	// VersionLen is the version message: the version string NUL-padded to 16 bytes.
	VersionLen = 16
	// SysDataLen is one system-data value (page size, cache line size): a big-endian 32-bit int.
	SysDataLen = 4
	// MTULen is the MTU message for peers of version 5.31 and later: the ibv_mtu enum in decimal,
	// NUL-terminated, in two bytes.
	MTULen = 2
	// KeyLen is the per-QP key message in its GID form, the only form used on RoCE.
	KeyLen = 108
	// ReportFieldLen is each field of the bandwidth report: a big-endian integer or double.
	ReportFieldLen = 8
	// ReportFields counts the report fields: size, iterations, peak, average, message rate.
	ReportFields = 5
	// DoneLen is the "done" string with its NUL that ends the exchange.
	DoneLen = 5
)

// Version is the perftest version gorxe advertises. It lies in [5.70, 6.28): new enough for
// current perftest to accept (it refuses peers older than 5.70) and old enough that perftest
// skips its parameter negotiation (6.28+), whose message is a raw C struct that depends on how
// perftest was built. gorxe skips that step too, since each side decides from the other's version.
const Version = "6.00"

// MinPeerVersion is the oldest perftest gorxe talks to, the same limit perftest applies. Every
// version from it on exchanges system data (5.32+), a 2-byte MTU message (5.31+) and 8-byte
// iteration counts in reports (5.33+), so those are the only forms gorxe implements.
const MinPeerVersion = 5.70

// negotiateVersion is where perftest starts negotiating parameters; a peer at or above it still
// skips the step with gorxe, because gorxe advertises an older Version.
const negotiateVersion = 6.28

// Errors of the out-of-band protocol. Each matches with errors.Is and the message says more.
var (
	// ErrBadMessage: a message from the peer does not have perftest's format.
	ErrBadMessage = errors.New("malformed perftest message")
	// ErrPeerVersion: the peer's perftest is too old to talk to.
	ErrPeerVersion = errors.New("incompatible perftest version")
)

// AppendVersion appends the 16-byte version message for version v (truncated to 15 characters so
// that the message stays NUL-terminated, as perftest's strncpy into char[16] leaves it).
func AppendVersion(dst []byte, v string) []byte {
	var b [VersionLen]byte
	copy(b[:VersionLen-1], v)
	return append(dst, b[:]...)
}

// ParseVersion reads a version message: the text up to the first NUL, which must start with a
// number as perftest reads it with atof.
func ParseVersion(b []byte) (text string, num float64, err error) {
	if len(b) != VersionLen {
		return "", 0, fmt.Errorf("%w: version message of %d bytes, want %d", ErrBadMessage, len(b), VersionLen)
	}
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	text = string(b[:n])
	num, ok := atof(text)
	if !ok || num < 1 {
		return text, 0, fmt.Errorf("%w: version %q is not a perftest version (a different tool on the other side?)", ErrBadMessage, text)
	}
	return text, num, nil
}

// atof reads the leading decimal number of s the way C's atof does for perftest versions
// ("5.93" -> 5.93, "6.06-rc1" -> 6.06); ok is false when s starts with no digit.
func atof(s string) (float64, bool) {
	i := 0
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// versionAtLeast compares versions the way perftest does: as C floats (atof then float), so
// "5.7" equals 5.70 and 5.33 is compared in single precision.
func versionAtLeast(v, threshold float64) bool { return float32(v) >= float32(threshold) }

// AppendSysData appends one system-data value.
func AppendSysData(dst []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(v))
}

// ParseSysData reads one system-data value.
func ParseSysData(b []byte) (int32, error) {
	if len(b) != SysDataLen {
		return 0, fmt.Errorf("%w: system data of %d bytes, want %d", ErrBadMessage, len(b), SysDataLen)
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

// AppendMTU appends the 2-byte MTU message for an ibv_mtu value (1..5).
func AppendMTU(dst []byte, m gorxe.MTU) []byte {
	var b [MTULen]byte
	copy(b[:1], strconv.Itoa(int(m)))
	return append(dst, b[:]...)
}

// ParseMTU reads an MTU message as perftest does (strtol of the leading digits); ok is false when
// the value is not a valid ibv_mtu, in which case perftest keeps its own MTU.
func ParseMTU(b []byte) (m gorxe.MTU, ok bool) {
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int(c-'0')
		if v > 1000 {
			return 0, false
		}
	}
	if v < int(gorxe.MTU256) || v > int(gorxe.MTU4096) {
		return 0, false
	}
	return gorxe.MTU(v), true
}

// Dest is what a side tells the other about one of its QPs (perftest's struct pingpong_dest):
// the address a key message carries.
type Dest struct {
	LID      uint16
	OutReads int // outstanding RDMA READ / atomic requests the QP may initiate
	QPN      uint32
	PSN      uint32
	RKey     uint32
	VAddr    uint64 // the buffer the peer targets
	GID      gorxe.GID
	SRQN     uint32
	// GIDIndex is the sender's GID index; only the RDMA-CM form of the message carries it.
	GIDIndex int
}

// AppendKey appends the 108-byte key message of d in its GID form:
// "%04x:%04x:%06x:%06x:%08x:%016llx:" then the 16 GID bytes as "%02x:" each, then "%08x:" and a
// NUL. Fields wider than their format grow the message in C; they are masked here so that the
// message keeps its fixed size.
func AppendKey(dst []byte, d *Dest) []byte {
	start := len(dst)
	dst = appendHex(dst, uint64(d.LID), 4)
	dst = append(dst, ':')
	dst = appendHex(dst, uint64(d.OutReads)&0xffff, 4)
	dst = append(dst, ':')
	dst = appendHex(dst, uint64(d.QPN)&0xffffff, 6)
	dst = append(dst, ':')
	dst = appendHex(dst, uint64(d.PSN)&0xffffff, 6)
	dst = append(dst, ':')
	dst = appendHex(dst, uint64(d.RKey), 8)
	dst = append(dst, ':')
	dst = appendHex(dst, d.VAddr, 16)
	dst = append(dst, ':')
	for _, b := range d.GID {
		dst = appendHex(dst, uint64(b), 2)
		dst = append(dst, ':')
	}
	dst = appendHex(dst, uint64(d.SRQN), 8)
	dst = append(dst, ':', 0)
	if len(dst)-start != KeyLen {
		panic("perftest: key message length") // unreachable: every field is masked to its width
	}
	return dst
}

// appendHex appends v as lowercase hex, zero-padded to width digits.
func appendHex(dst []byte, v uint64, width int) []byte {
	const digits = "0123456789abcdef"
	var b [16]byte
	i := len(b)
	for v > 0 || i == len(b) {
		i--
		b[i] = digits[v&0xf]
		v >>= 4
	}
	for n := len(b) - i; n < width; n++ {
		dst = append(dst, '0')
	}
	return append(dst, b[i:]...)
}

// ParseKey reads a key message in its GID form. perftest reads each field with strtol up to the
// next ':'; so does ParseKey, but it rejects anything that is not hexadecimal where perftest would
// silently read zeros, because a garbled key message means the two sides disagree on the format.
func ParseKey(b []byte) (Dest, error) {
	var d Dest
	if len(b) != KeyLen {
		return d, fmt.Errorf("%w: key message of %d bytes, want %d", ErrBadMessage, len(b), KeyLen)
	}
	msg := b
	if i := indexByte(msg, 0); i >= 0 {
		msg = msg[:i]
	}
	fields := make([][]byte, 0, 24)
	for len(msg) > 0 {
		i := indexByte(msg, ':')
		if i < 0 {
			fields = append(fields, msg)
			break
		}
		fields = append(fields, msg[:i])
		msg = msg[i+1:]
	}
	// LID, out_reads, QPN, PSN, RKey, VAddr, 16 GID bytes, SRQN.
	if len(fields) != 23 {
		return d, fmt.Errorf("%w: key message %q has %d fields, want 23 (a different perftest format?)", ErrBadMessage, printable(b), len(fields))
	}
	var vals [23]uint64
	for i, f := range fields {
		v, err := strconv.ParseUint(string(f), 16, 64)
		if err != nil || len(f) == 0 {
			return d, fmt.Errorf("%w: key message %q: field %d (%q) is not hexadecimal", ErrBadMessage, printable(b), i+1, f)
		}
		vals[i] = v
	}
	if vals[0] > math.MaxUint16 || vals[2] > 0xffffff || vals[3] > 0xffffff || vals[4] > math.MaxUint32 || vals[22] > math.MaxUint32 {
		return d, fmt.Errorf("%w: key message %q: a field is out of range", ErrBadMessage, printable(b))
	}
	for i := 6; i < 22; i++ {
		if vals[i] > 0xff {
			return d, fmt.Errorf("%w: key message %q: GID byte %d out of range", ErrBadMessage, printable(b), i-6)
		}
		d.GID[i-6] = byte(vals[i])
	}
	d.LID = uint16(vals[0])
	d.OutReads = int(vals[1] & 0xffff)
	d.QPN = uint32(vals[2])
	d.PSN = uint32(vals[3])
	d.RKey = uint32(vals[4])
	d.VAddr = vals[5]
	d.SRQN = uint32(vals[22])
	return d, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// printable returns b up to its first NUL with other control bytes escaped, for error messages.
func printable(b []byte) string {
	if i := indexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	q := strconv.QuoteToASCII(string(b))
	return q[1 : len(q)-1]
}

// Report is one side's bandwidth result (perftest's struct bw_report_data, the exchanged part).
type Report struct {
	Size    uint64
	Iters   uint64
	BWPeak  float64 // in the report unit of the side that measured (MB/s or Gb/s)
	BWAvg   float64
	MsgRate float64 // millions of messages per second
}

// AppendReportField appends field i (0..4) of r as it travels: integers big-endian, doubles as
// their IEEE 754 bits big-endian (perftest byte-swaps them on little-endian hosts).
func AppendReportField(dst []byte, r *Report, i int) []byte {
	var v uint64
	switch i {
	case 0:
		v = r.Size
	case 1:
		v = r.Iters
	case 2:
		v = math.Float64bits(r.BWPeak)
	case 3:
		v = math.Float64bits(r.BWAvg)
	case 4:
		v = math.Float64bits(r.MsgRate)
	}
	return binary.BigEndian.AppendUint64(dst, v)
}

// SetReportField stores field i of r from its 8 bytes on the wire.
func SetReportField(r *Report, i int, b []byte) error {
	if len(b) != ReportFieldLen {
		return fmt.Errorf("%w: report field of %d bytes, want %d", ErrBadMessage, len(b), ReportFieldLen)
	}
	v := binary.BigEndian.Uint64(b)
	switch i {
	case 0:
		r.Size = v
	case 1:
		r.Iters = v
	case 2:
		r.BWPeak = math.Float64frombits(v)
	case 3:
		r.BWAvg = math.Float64frombits(v)
	case 4:
		r.MsgRate = math.Float64frombits(v)
	}
	return nil
}

// doneMsg is the message each side writes last (with its NUL).
var doneMsg = []byte("done\x00")
