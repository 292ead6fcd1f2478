package netio

import "errors"

// Errors returned for misuse. They may be wrapped; test with errors.Is. A closed Conn returns errors
// matching net.ErrClosed.
var (
	// ErrBadDestination: a message's Dst is invalid, unspecified or has port 0.
	ErrBadDestination = errors.New("destination address invalid, unspecified or port 0")
	// ErrUnknownSource: a message's Src address is not one of the Conn's local addresses.
	ErrUnknownSource = errors.New("source address is not a local address")
	// ErrNoSourceAddress: Src was left unset and no local address has Dst's family.
	ErrNoSourceAddress = errors.New("no local address of the destination's family")
	// ErrAddressFamily: Src and Dst are of different IP families.
	ErrAddressFamily = errors.New("source and destination address families differ")
	// ErrMessageTooLong: a datagram does not fit in one IP packet.
	ErrMessageTooLong = errors.New("datagram too long")
	// ErrSegmentSize: SegmentSize was set on a message to Send, where it is reserved.
	ErrSegmentSize = errors.New("SegmentSize must be zero on send")
	// ErrEmptyBuffer: a message handed to Receive has a zero-capacity Buf.
	ErrEmptyBuffer = errors.New("receive buffer has no capacity")
	// ErrNoAddresses: a Conn or endpoint was requested with no local address.
	ErrNoAddresses = errors.New("no local addresses")
	// ErrWildcardAddress: a local address is the unspecified (wildcard) address or invalid.
	ErrWildcardAddress = errors.New("local address must be a specific address, not the wildcard")
	// ErrDuplicateAddress: the same local address was given twice.
	ErrDuplicateAddress = errors.New("duplicate local address")
	// ErrAddressInUse: another fabric endpoint already owns the address and port.
	ErrAddressInUse = errors.New("address and port already in use on the fabric")
	// ErrTooManySendSockets: the per-Conn limit of source-port sockets is reached.
	ErrTooManySendSockets = errors.New("too many source-port sockets")
	// ErrNotSupported: the backend does not exist on this operating system.
	ErrNotSupported = errors.New("not supported on this platform")
)
