package mad

import "errors"

// Sentinel errors for malformed MADs and for fields that do not fit. They
// carry no dynamic data, so a receiver can drop and count without allocating.
var (
	// ErrTruncated means the datagram is shorter than a 256-byte MAD.
	ErrTruncated = errors.New("mad: truncated")

	// ErrBaseVersion means the MAD base version is not 1.
	ErrBaseVersion = errors.New("mad: unsupported base version")

	// ErrClass means the management class is not the communication manager's (0x07).
	ErrClass = errors.New("mad: not a communication management MAD")

	// ErrClassVersion means the CM class version is not 2, the version Linux's
	// ib_cm registers and every RoCE peer sends.
	ErrClassVersion = errors.New("mad: unsupported CM class version")

	// ErrMethod means the method is not Send (0x03), the only method CM
	// messages use.
	ErrMethod = errors.New("mad: unsupported CM method")

	// ErrUnknownAttribute means the attribute ID names no CM message.
	ErrUnknownAttribute = errors.New("mad: unknown CM attribute")

	// ErrPrivateDataTooLong means private data (or ARI, or additional
	// information) is longer than the message's fixed area for it.
	ErrPrivateDataTooLong = errors.New("mad: private data too long for the message")

	// ErrAddressFamily means the addresses given for an RDMA-CM header are not
	// both IPv4 or both IPv6.
	ErrAddressFamily = errors.New("mad: invalid or mixed IP address family")
)
