package packet

import "errors"

// Sentinel errors returned for malformed packets and misuse. They never wrap
// dynamic data, so the receive path can drop and count without allocating.
var (
	// ErrTruncated means the input ends before a header, the payload or the
	// ICRC it must contain.
	ErrTruncated = errors.New("truncated")

	// ErrUnknownOpcode means the BTH opcode is not one this package knows
	// (reserved, manufacturer-specific, or XRC).
	ErrUnknownOpcode = errors.New("unknown opcode")

	// ErrBadTransportVersion means the BTH TVer field is not 0, the only
	// version IBTA defines; receivers drop such packets.
	ErrBadTransportVersion = errors.New("unsupported BTH transport header version")

	// ErrBadPad means the pad count is larger than the payload, or payload
	// plus pad is not a multiple of four bytes.
	ErrBadPad = errors.New("pad count inconsistent with payload length")

	// ErrUnexpectedPayload means payload or pad bytes follow the headers of
	// an opcode that carries none (a read request, an ACK, FLUSH, ...).
	ErrUnexpectedPayload = errors.New("payload on an opcode that carries none")

	// ErrBadPayloadLength means the payload length differs from the fixed
	// length the opcode requires (ATOMIC_WRITE carries exactly 8 bytes, a CNP
	// 16 reserved bytes).
	ErrBadPayloadLength = errors.New("payload length not allowed for opcode")

	// ErrBadICRC means the invariant CRC does not match the packet.
	ErrBadICRC = errors.New("ICRC mismatch")

	// ErrAddressFamily means an Envelope's addresses are invalid or not of
	// the same family (IPv4 or IPv6).
	ErrAddressFamily = errors.New("invalid or mixed IP address family")

	// ErrTooLong means a packet does not fit in one IP/UDP datagram.
	ErrTooLong = errors.New("too long for a UDP datagram")

	// ErrBadIPHeader means the IP header is not one RoCEv2 uses: an unknown
	// version, IPv4 options, a fragment, or a next protocol other than UDP.
	ErrBadIPHeader = errors.New("unsupported IP header")

	// ErrBadLength means the IP or UDP length fields disagree with the data.
	ErrBadLength = errors.New("IP or UDP length inconsistent")
)
