package layers

import "errors"

// Errors of this package. Decoding errors are the packet package's sentinels
// (packet.ErrTruncated, packet.ErrUnknownOpcode, ...), returned unwrapped.
var (
	// ErrNoNetworkLayer means the ICRC was to be computed or verified but
	// no IPv4 or IPv6 layer and UDP layer were given for it.
	ErrNoNetworkLayer = errors.New("layers: ICRC needs the IPv4 or IPv6 and the UDP layer; call SetNetworkLayerForICRC")

	// ErrMissingHeaders means a BTH was serialized in front of fewer bytes
	// than the extension headers its opcode prescribes.
	ErrMissingHeaders = errors.New("layers: fewer bytes after the BTH than its opcode's extension headers")

	// ErrUnknownHeader means an Ext layer's Header is not an extension
	// header the packet package knows.
	ErrUnknownHeader = errors.New("layers: unknown extension header")

	// ErrHeaderSize means an Ext layer was serialized with Contents of a
	// length other than its header's size.
	ErrHeaderSize = errors.New("layers: extension header contents of the wrong length")
)
