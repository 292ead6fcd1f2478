package packet

// Opcode is the BTH "OpCode" field: the top three bits select the transport
// service ([Transport]), the low five bits the operation ([Operation]). The
// opcode alone determines which extension headers follow the BTH, whether
// the packet carries payload, and where it sits in a message; the methods of
// Opcode answer those questions from one static table.
type Opcode uint8

// Transport is the transport-service part of an [Opcode] (its top three bits).
type Transport uint8

// Transport services (IBTA table 38).
const (
	TransportRC  Transport = 0x00 // Reliable Connection
	TransportUC  Transport = 0x20 // Unreliable Connection
	TransportRD  Transport = 0x40 // Reliable Datagram; in the table, unused by RoCE stacks
	TransportUD  Transport = 0x60 // Unreliable Datagram
	TransportCNP Transport = 0x80 // RoCEv2 Congestion Notification Packet
)

const (
	transportMask = 0xE0
	operationMask = 0x1F
)

// Operation is the operation part of an [Opcode] (its low five bits).
type Operation uint8

// Operations (IBTA table 38, plus the 1.5 memory placement extensions).
const (
	OperationSendFirst                  Operation = 0x00
	OperationSendMiddle                 Operation = 0x01
	OperationSendLast                   Operation = 0x02
	OperationSendLastWithImmediate      Operation = 0x03
	OperationSendOnly                   Operation = 0x04
	OperationSendOnlyWithImmediate      Operation = 0x05
	OperationRDMAWriteFirst             Operation = 0x06
	OperationRDMAWriteMiddle            Operation = 0x07
	OperationRDMAWriteLast              Operation = 0x08
	OperationRDMAWriteLastWithImmediate Operation = 0x09
	OperationRDMAWriteOnly              Operation = 0x0A
	OperationRDMAWriteOnlyWithImmediate Operation = 0x0B
	OperationRDMAReadRequest            Operation = 0x0C
	OperationRDMAReadResponseFirst      Operation = 0x0D
	OperationRDMAReadResponseMiddle     Operation = 0x0E
	OperationRDMAReadResponseLast       Operation = 0x0F
	OperationRDMAReadResponseOnly       Operation = 0x10
	OperationAcknowledge                Operation = 0x11
	OperationAtomicAcknowledge          Operation = 0x12
	OperationCompareSwap                Operation = 0x13
	OperationFetchAdd                   Operation = 0x14
	OperationSendLastWithInvalidate     Operation = 0x16
	OperationSendOnlyWithInvalidate     Operation = 0x17
	OperationFlush                      Operation = 0x1C
	OperationAtomicWrite                Operation = 0x1D
)

// NewOpcode combines a transport and an operation. The result need not be a
// defined opcode; check [Opcode.Valid].
func NewOpcode(t Transport, op Operation) Opcode {
	return Opcode(uint8(t)&transportMask | uint8(op)&operationMask)
}

// Opcodes of the transports RoCE uses. RD opcodes (0x40-0x54) are in the
// table and parse, but have no constants since no RoCE stack sends them.
const (
	RCSendFirst                  = Opcode(TransportRC) | Opcode(OperationSendFirst)
	RCSendMiddle                 = Opcode(TransportRC) | Opcode(OperationSendMiddle)
	RCSendLast                   = Opcode(TransportRC) | Opcode(OperationSendLast)
	RCSendLastWithImmediate      = Opcode(TransportRC) | Opcode(OperationSendLastWithImmediate)
	RCSendOnly                   = Opcode(TransportRC) | Opcode(OperationSendOnly)
	RCSendOnlyWithImmediate      = Opcode(TransportRC) | Opcode(OperationSendOnlyWithImmediate)
	RCRDMAWriteFirst             = Opcode(TransportRC) | Opcode(OperationRDMAWriteFirst)
	RCRDMAWriteMiddle            = Opcode(TransportRC) | Opcode(OperationRDMAWriteMiddle)
	RCRDMAWriteLast              = Opcode(TransportRC) | Opcode(OperationRDMAWriteLast)
	RCRDMAWriteLastWithImmediate = Opcode(TransportRC) | Opcode(OperationRDMAWriteLastWithImmediate)
	RCRDMAWriteOnly              = Opcode(TransportRC) | Opcode(OperationRDMAWriteOnly)
	RCRDMAWriteOnlyWithImmediate = Opcode(TransportRC) | Opcode(OperationRDMAWriteOnlyWithImmediate)
	RCRDMAReadRequest            = Opcode(TransportRC) | Opcode(OperationRDMAReadRequest)
	RCRDMAReadResponseFirst      = Opcode(TransportRC) | Opcode(OperationRDMAReadResponseFirst)
	RCRDMAReadResponseMiddle     = Opcode(TransportRC) | Opcode(OperationRDMAReadResponseMiddle)
	RCRDMAReadResponseLast       = Opcode(TransportRC) | Opcode(OperationRDMAReadResponseLast)
	RCRDMAReadResponseOnly       = Opcode(TransportRC) | Opcode(OperationRDMAReadResponseOnly)
	RCAcknowledge                = Opcode(TransportRC) | Opcode(OperationAcknowledge)
	RCAtomicAcknowledge          = Opcode(TransportRC) | Opcode(OperationAtomicAcknowledge)
	RCCompareSwap                = Opcode(TransportRC) | Opcode(OperationCompareSwap)
	RCFetchAdd                   = Opcode(TransportRC) | Opcode(OperationFetchAdd)
	RCSendLastWithInvalidate     = Opcode(TransportRC) | Opcode(OperationSendLastWithInvalidate)
	RCSendOnlyWithInvalidate     = Opcode(TransportRC) | Opcode(OperationSendOnlyWithInvalidate)
	RCFlush                      = Opcode(TransportRC) | Opcode(OperationFlush)
	RCAtomicWrite                = Opcode(TransportRC) | Opcode(OperationAtomicWrite)

	UCSendFirst                  = Opcode(TransportUC) | Opcode(OperationSendFirst)
	UCSendMiddle                 = Opcode(TransportUC) | Opcode(OperationSendMiddle)
	UCSendLast                   = Opcode(TransportUC) | Opcode(OperationSendLast)
	UCSendLastWithImmediate      = Opcode(TransportUC) | Opcode(OperationSendLastWithImmediate)
	UCSendOnly                   = Opcode(TransportUC) | Opcode(OperationSendOnly)
	UCSendOnlyWithImmediate      = Opcode(TransportUC) | Opcode(OperationSendOnlyWithImmediate)
	UCRDMAWriteFirst             = Opcode(TransportUC) | Opcode(OperationRDMAWriteFirst)
	UCRDMAWriteMiddle            = Opcode(TransportUC) | Opcode(OperationRDMAWriteMiddle)
	UCRDMAWriteLast              = Opcode(TransportUC) | Opcode(OperationRDMAWriteLast)
	UCRDMAWriteLastWithImmediate = Opcode(TransportUC) | Opcode(OperationRDMAWriteLastWithImmediate)
	UCRDMAWriteOnly              = Opcode(TransportUC) | Opcode(OperationRDMAWriteOnly)
	UCRDMAWriteOnlyWithImmediate = Opcode(TransportUC) | Opcode(OperationRDMAWriteOnlyWithImmediate)

	UDSendOnly              = Opcode(TransportUD) | Opcode(OperationSendOnly)
	UDSendOnlyWithImmediate = Opcode(TransportUD) | Opcode(OperationSendOnlyWithImmediate)

	// CNP is the RoCEv2 Congestion Notification Packet (IBTA annex A17):
	// a BTH followed by 16 reserved bytes.
	CNP Opcode = 0x81
)

// Kind groups opcodes by what they do, independent of transport and of the
// packet's position in the message.
type Kind uint8

// Kinds of opcode. KindInvalid is the kind of undefined opcodes.
const (
	KindInvalid Kind = iota
	KindSend
	KindRDMAWrite
	KindRDMAReadRequest
	KindRDMAReadResponse
	KindAcknowledge
	KindAtomicAcknowledge
	KindCompareSwap
	KindFetchAdd
	KindFlush
	KindAtomicWrite
	KindCNP
)

var kindNames = [...]string{
	KindInvalid:           "INVALID",
	KindSend:              "SEND",
	KindRDMAWrite:         "RDMA_WRITE",
	KindRDMAReadRequest:   "RDMA_READ_REQUEST",
	KindRDMAReadResponse:  "RDMA_READ_RESPONSE",
	KindAcknowledge:       "ACKNOWLEDGE",
	KindAtomicAcknowledge: "ATOMIC_ACKNOWLEDGE",
	KindCompareSwap:       "COMPARE_SWAP",
	KindFetchAdd:          "FETCH_ADD",
	KindFlush:             "FLUSH",
	KindAtomicWrite:       "ATOMIC_WRITE",
	KindCNP:               "CNP",
}

// String returns the IBTA spelling of the kind ("RDMA_WRITE", ...).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return kindNames[KindInvalid]
}

// Position tells where a packet sits in a message.
type Position uint8

// Positions. PositionInvalid is the position of undefined opcodes.
const (
	PositionInvalid Position = iota
	PositionFirst
	PositionMiddle
	PositionLast
	PositionOnly
)

// String returns "FIRST", "MIDDLE", "LAST" or "ONLY".
func (p Position) String() string {
	switch p {
	case PositionFirst:
		return "FIRST"
	case PositionMiddle:
		return "MIDDLE"
	case PositionLast:
		return "LAST"
	case PositionOnly:
		return "ONLY"
	}
	return "INVALID"
}

// String returns the abbreviation of the transport service ("RC", "UD", ...).
func (t Transport) String() string {
	switch t {
	case TransportRC:
		return "RC"
	case TransportUC:
		return "UC"
	case TransportRD:
		return "RD"
	case TransportUD:
		return "UD"
	case TransportCNP:
		return "CNP"
	}
	return "Transport(0x" + string(hexDigit(uint8(t)>>4)) + string(hexDigit(uint8(t))) + ")"
}

// Valid reports whether op is an opcode this package can parse.
func (op Opcode) Valid() bool { return opTable[op].kind != KindInvalid }

// String returns the IBTA name of the opcode with its transport prefix, as
// the kernel and Wireshark spell it ("RC_SEND_FIRST",
// "UD_SEND_ONLY_WITH_IMMEDIATE", "CNP"), or "Opcode(0xNN)" if undefined.
func (op Opcode) String() string {
	if n := opTable[op].name; n != "" {
		return n
	}
	return "Opcode(0x" + string(hexDigit(uint8(op)>>4)) + string(hexDigit(uint8(op))) + ")"
}

// Transport returns the transport-service bits of op.
func (op Opcode) Transport() Transport { return Transport(op & transportMask) }

// Operation returns the operation bits of op.
func (op Opcode) Operation() Operation { return Operation(op & operationMask) }

// Kind returns what op does, or KindInvalid.
func (op Opcode) Kind() Kind { return opTable[op].kind }

// Position returns where a packet with opcode op sits in its message.
func (op Opcode) Position() Position { return opTable[op].pos }

// StartsMessage reports whether op is a FIRST or ONLY opcode.
func (op Opcode) StartsMessage() bool {
	p := opTable[op].pos
	return p == PositionFirst || p == PositionOnly
}

// EndsMessage reports whether op is a LAST or ONLY opcode.
func (op Opcode) EndsMessage() bool {
	p := opTable[op].pos
	return p == PositionLast || p == PositionOnly
}

// IsRequest reports whether op is sent by a requester (SEND, RDMA WRITE,
// RDMA READ request, atomics, FLUSH, ATOMIC_WRITE).
func (op Opcode) IsRequest() bool { return opTable[op].flags&opRequest != 0 }

// IsResponse reports whether op is sent by a responder (RDMA READ responses,
// ACKNOWLEDGE, ATOMIC_ACKNOWLEDGE).
func (op Opcode) IsResponse() bool { return opTable[op].flags&opResponse != 0 }

// HasImmediate reports whether op carries an ImmDt header.
func (op Opcode) HasImmediate() bool { return opTable[op].headers.Has(HeaderImmDt) }

// HasInvalidate reports whether op carries an IETH header.
func (op Opcode) HasInvalidate() bool { return opTable[op].headers.Has(HeaderIETH) }

// Headers returns the extension headers op carries after the BTH.
func (op Opcode) Headers() HeaderSet { return opTable[op].headers }

// HeaderLen returns the length of the BTH plus the extension headers of op,
// that is the offset of the payload, or 0 if op is undefined.
func (op Opcode) HeaderLen() int { return int(opTable[op].hdrLen) }

// HeaderOffset returns the offset of extension header h from the start of
// the BTH, and whether op carries h.
func (op Opcode) HeaderOffset(h Header) (int, bool) {
	e := &opTable[op]
	if !e.headers.Has(h) {
		return 0, false
	}
	return int(e.off[h]), true
}

// HasPayload reports whether op may carry payload bytes. A SEND or RDMA WRITE
// packet may still carry zero bytes; see also [Opcode.FixedPayloadLen].
func (op Opcode) HasPayload() bool { return opTable[op].payload != payloadNone }

// FixedPayloadLen returns the payload length op requires when it is fixed
// (8 for ATOMIC_WRITE, 16 for CNP), or 0 otherwise.
func (op Opcode) FixedPayloadLen() int {
	if opTable[op].payload != payloadFixed {
		return 0
	}
	return int(opTable[op].fixedLen)
}
