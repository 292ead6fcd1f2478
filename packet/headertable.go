package packet

// The extension headers: their names, the values a packet built from
// scratch gives them, and the table that describes them.

// Header names one kind of extension transport header. The constants are in
// IBTA wire order: when an opcode carries several extension headers they
// follow the BTH in increasing Header order.
type Header uint8

// Extension headers, in wire order.
const (
	HeaderRDETH Header = iota
	HeaderDETH
	HeaderFETH
	HeaderRETH
	HeaderAtomicETH
	HeaderAETH
	HeaderAtomicAckETH
	HeaderImmDt
	HeaderIETH

	// NumHeaders is the number of extension headers: Header values run
	// from 0 to NumHeaders-1.
	NumHeaders = iota
)

// Headers holds the values of every header a packet may carry. Only the
// extension headers that BTH.Opcode prescribes are used; the others are
// ignored when encoding and zeroed when decoding.
type Headers struct {
	BTH          BTHFields
	RDETH        RDETHFields
	DETH         DETHFields
	FETH         FETHFields
	RETH         RETHFields
	AtomicETH    AtomicETHFields
	AETH         AETHFields
	AtomicAckETH AtomicAckETHFields
	ImmDt        ImmDtFields
	IETH         IETHFields
}

// HeaderDesc describes one extension header: everything code needs to build,
// parse, decode and show it without naming it. [Header.Desc] returns it.
//
// Adding an extension header touches two files and the opcode table: its
// view file (the IBTA diagram, the view type and its accessors, a Fields
// struct with Encode and Fields, the Parsed accessor), and this one (a
// [Header] constant in wire order, a field in [Headers], its row in
// headerTable, a case in encodeExt and decodeExt); the opcode table says
// which opcodes carry it. Parse,
// AppendPacket, Parsed.Headers, the gopacket layers and the dump follow.
type HeaderDesc struct {
	// Name is the IBTA abbreviation ("RETH"). Lower-cased, it is the
	// header's key in JSON records.
	Name string
	// Title is the header's full name and where the specification
	// defines it.
	Title string
	// Size is the header's length in bytes.
	Size int
	// Fields lists the fields in the order they are shown, which need not
	// be wire order.
	Fields []Field
	// Scalar marks a header of one field that JSON records write as its
	// bare value rather than as an object.
	Scalar bool
	// RecordOrder places the header among the others in a JSON record:
	// ascending. It keeps the order gorxe's records first had, which
	// follows Wireshark's InfiniBand dissector rather than wire order.
	RecordOrder uint8
}

// Desc returns the description of h, or nil for an unknown Header. The
// description is the package's own: read it, never modify it.
func (h Header) Desc() *HeaderDesc {
	if h >= NumHeaders {
		return nil
	}
	return &headerTable[h]
}

// encodeExt writes h's values of extension header hd into v, and decodeExt
// reads them back. They switch rather than call a function of each row:
// a call through a function value makes Go assume h escapes, which would
// cost the send and receive paths an allocation per packet.
func (h *Headers) encodeExt(hd Header, v []byte) {
	switch hd {
	case HeaderRDETH:
		RDETH(v).Encode(&h.RDETH)
	case HeaderDETH:
		DETH(v).Encode(&h.DETH)
	case HeaderFETH:
		FETH(v).Encode(&h.FETH)
	case HeaderRETH:
		RETH(v).Encode(&h.RETH)
	case HeaderAtomicETH:
		AtomicETH(v).Encode(&h.AtomicETH)
	case HeaderAETH:
		AETH(v).Encode(&h.AETH)
	case HeaderAtomicAckETH:
		AtomicAckETH(v).Encode(&h.AtomicAckETH)
	case HeaderImmDt:
		ImmDt(v).Encode(&h.ImmDt)
	case HeaderIETH:
		IETH(v).Encode(&h.IETH)
	}
}

func (h *Headers) decodeExt(hd Header, v []byte) {
	switch hd {
	case HeaderRDETH:
		h.RDETH = RDETH(v).Fields()
	case HeaderDETH:
		h.DETH = DETH(v).Fields()
	case HeaderFETH:
		h.FETH = FETH(v).Fields()
	case HeaderRETH:
		h.RETH = RETH(v).Fields()
	case HeaderAtomicETH:
		h.AtomicETH = AtomicETH(v).Fields()
	case HeaderAETH:
		h.AETH = AETH(v).Fields()
	case HeaderAtomicAckETH:
		h.AtomicAckETH = AtomicAckETH(v).Fields()
	case HeaderImmDt:
		h.ImmDt = ImmDt(v).Fields()
	case HeaderIETH:
		h.IETH = IETH(v).Fields()
	}
}

// headerTable is the one description of every extension header.
var headerTable = [NumHeaders]HeaderDesc{
	HeaderRDETH: {
		Name: "RDETH", Title: "Reliable Datagram Extended Transport Header (IBTA 9.3.1)", Size: RDETHSize,
		Fields: []Field{
			{Name: "EE-Context", Key: "eecontext", Abbrev: "eecnxt", Bit: 8, Width: 24, Base: BaseHex,
				Doc: "end-to-end context of the RD channel"},
		},
		RecordOrder: 8,
	},
	HeaderDETH: {
		Name: "DETH", Title: "Datagram Extended Transport Header (IBTA 9.3.2)", Size: DETHSize,
		Fields: []Field{
			{Name: "Q_Key", Key: "qkey", Abbrev: "qkey", Bit: 0, Width: 32, Base: BaseHex,
				Doc: "queue key: must match the receiving UD QP's Q_Key",
				Special: []FieldValue{{GSIQKey,
					"queue key: 0x80010000 is the well-known Q_Key of QP1, the connection manager's MADs"}}},
			{Name: "Source QP", Key: "srcqp", Abbrev: "srcqp", Bit: 40, Width: 24, Base: BaseHex,
				Doc: "the sender's QP number, reported in the receive completion"},
		},
		RecordOrder: 2,
	},
	HeaderFETH: {
		Name: "FETH", Title: "Flush Extended Transport Header (IBTA 1.5 memory placement extensions)", Size: FETHSize,
		Fields: []Field{
			{Name: "Placement Type", Key: "placement", Abbrev: "placement", Bit: 28, Width: 4, Base: BaseDec,
				Doc: "bit 0: global visibility, bit 1: persistence"},
			{Name: "Selectivity Level", Key: "selectivity", Abbrev: "selectivity", Bit: 26, Width: 2, Base: BaseDec,
				Doc: "0: flush the RETH's range, 1: the whole memory region"},
		},
		RecordOrder: 7,
	},
	HeaderRETH: {
		Name: "RETH", Title: "RDMA Extended Transport Header (IBTA 9.3.3)", Size: RETHSize,
		Fields: []Field{
			{Name: "Virtual Address", Key: "va", Abbrev: "va", Bit: 0, Width: 64, Base: BaseHex,
				Doc: "where in the responder's memory region the operation starts"},
			{Name: "R_Key", Key: "rkey", Abbrev: "rkey", Bit: 64, Width: 32, Base: BaseHex,
				Doc: "remote key the responder checks against its memory registration and access rights"},
			{Name: "DMA Length", Key: "dmalen", Abbrev: "dmalen", Bit: 96, Width: 32, Base: BaseDec,
				Doc: "length of the whole operation in bytes, across all its packets"},
		},
		RecordOrder: 0,
	},
	HeaderAtomicETH: {
		Name: "AtomicETH", Title: "Atomic Extended Transport Header (IBTA 9.3.4)", Size: AtomicETHSize,
		Fields: []Field{
			{Name: "Virtual Address", Key: "va", Abbrev: "va", Bit: 0, Width: 64, Base: BaseHex,
				Doc: "the 8-byte-aligned target in the responder's memory"},
			{Name: "R_Key", Key: "rkey", Abbrev: "rkey", Bit: 64, Width: 32, Base: BaseHex,
				Doc: "remote key authorising the atomic access"},
			{Name: "Swap Data", Key: "swap", Abbrev: "swap", Bit: 96, Width: 64, Base: BaseDec,
				Doc:      "stored if the target equals Compare Data",
				Variants: []FieldVariant{{KindFetchAdd, "Swap (Add) Data", "add", "the value FETCH_ADD adds to the target"}}},
			{Name: "Compare Data", Key: "compare", Abbrev: "compare", Bit: 160, Width: 64, Base: BaseDec,
				Doc:      "the value the target is compared with",
				Variants: []FieldVariant{{KindFetchAdd, "Compare Data", "", "unused by FETCH_ADD"}}},
		},
		RecordOrder: 5,
	},
	HeaderAETH: {
		Name: "AETH", Title: "ACK Extended Transport Header (IBTA 9.3.5)", Size: AETHSize,
		Fields: []Field{
			{Name: "Syndrome", Key: "syndrome", Abbrev: "syndrome", Bit: 0, Width: 8, Base: BaseSyndrome,
				Doc: "kind of acknowledgement (top three bits) and its value (low five)"},
			{Name: "MSN", Key: "msn", Abbrev: "msn", Bit: 8, Width: 24, Base: BaseDec,
				Doc: "message sequence number: how many requests (messages) the responder has completed, mod 2^24"},
		},
		RecordOrder: 1,
	},
	HeaderAtomicAckETH: {
		Name: "AtomicAckETH", Title: "Atomic Acknowledge Extended Transport Header (IBTA 9.3.6)", Size: AtomicAckETHSize,
		Fields: []Field{
			{Name: "Original Remote Data", Key: "orig", Abbrev: "orig", Bit: 0, Width: 64, Base: BaseDec,
				Doc: "the target's value before the atomic operation, returned to the requester"},
		},
		RecordOrder: 6,
	},
	HeaderImmDt: {
		Name: "ImmDt", Title: "Immediate Data Extended Transport Header (IBTA 9.3.7)", Size: ImmDtSize,
		Fields: []Field{
			{Name: "Immediate Data", Key: "immdt", Abbrev: "imm", Bit: 0, Width: 32, Base: BaseHex,
				Doc: "4 opaque bytes delivered in the receiver's completion (imm_data)"},
		},
		Scalar:      true,
		RecordOrder: 3,
	},
	HeaderIETH: {
		Name: "IETH", Title: "Invalidate Extended Transport Header (IBTA 9.3.8)", Size: IETHSize,
		Fields: []Field{
			{Name: "R_Key", Key: "ieth", Abbrev: "invrkey", Bit: 0, Width: 32, Base: BaseHex,
				Doc: "the remote key the receiver invalidates when the SEND completes"},
		},
		Scalar:      true,
		RecordOrder: 4,
	},
}
