package packet

// Field describes one field of an extension header: where its bits are and
// how a person reads it. Code that treats every header alike (the gopacket
// layers, the dump) walks these instead of naming each header's accessors;
// the view types remain the typed, fast way to read one header.
type Field struct {
	// Name is the field's IBTA name, as in the header's diagram.
	Name string
	// Key names the field in JSON records: short and lower case.
	Key string
	// Abbrev names the field in one-line summaries; empty leaves it off.
	Abbrev string

	// Bit is the offset of the field's most significant bit from the
	// header's first bit (IBTA numbers bits from the most significant bit
	// of the first byte), and Width its length in bits, 1 to 64.
	Bit   uint16
	Width uint8

	// Base says how the value is written.
	Base Base
	// Doc says what the value means, for a reader learning the protocol.
	Doc string
	// Special lists values whose meaning is not Doc's.
	Special []FieldValue
	// Variants rename or re-explain the field for some operations.
	Variants []FieldVariant
}

// Base says how a field's value is written for people.
type Base uint8

// Bases of field values.
const (
	BaseDec      Base = iota // decimal
	BaseHex                  // 0x and as many hex digits as the width needs
	BaseSyndrome             // an AETH syndrome: hex, and decoded by its type
)

// FieldValue gives the meaning of one value of a field.
type FieldValue struct {
	Value uint64
	Doc   string
}

// FieldVariant is how a field reads in packets of one kind of operation:
// the AtomicETH's "Swap Data" is an addend in a FETCH_ADD.
type FieldVariant struct {
	Kind   Kind
	Name   string
	Abbrev string // empty leaves the field off one-line summaries
	Doc    string
}

// For returns the field as it reads in a packet of operation kind k: f with
// the names and meaning of its variant for k, if it has one.
func (f Field) For(k Kind) Field {
	for _, v := range f.Variants {
		if v.Kind == k {
			f.Name, f.Abbrev, f.Doc = v.Name, v.Abbrev, v.Doc
			break
		}
	}
	return f
}

// Meaning returns what value v of f means: its Special entry, or Doc.
func (f Field) Meaning(v uint64) string {
	for _, s := range f.Special {
		if s.Value == v {
			return s.Doc
		}
	}
	return f.Doc
}

// Value returns the field's value in hdr, a header of the field's kind.
// hdr must hold the whole field; Value does not bound-check. A field that
// does not start on a byte boundary must fit in eight bytes with the bits
// before it, as every IBTA field does.
func (f Field) Value(hdr []byte) uint64 {
	first, end := int(f.Bit)/8, (int(f.Bit)+int(f.Width)+7)/8
	var v uint64
	for _, c := range hdr[first:end] {
		v = v<<8 | uint64(c)
	}
	tail := uint(end*8 - int(f.Bit) - int(f.Width)) // bits after the field in its last byte
	return v >> tail & (1<<f.Width - 1)
}
