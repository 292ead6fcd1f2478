// Package packet encodes and decodes RoCEv2 (InfiniBand transport over UDP) packets:
// byte-slice views of the IBTA transport headers, the opcode table, PSN arithmetic,
// the invariant CRC and the IP/UDP framing around it.
//
// It is one of gorxe's engine packages: the transport builds and checks packets with it, and the
// capture, dump and trace tools read them. Programs embed gorxe through the root package,
// github.com/gorxe/gorxe; the few wire values a verbs program needs (the default P_Key, the GSI
// Q_Key) are constants there.
//
// # Layout of a RoCEv2 packet
//
// A RoCEv2 packet is the payload of a UDP datagram sent to port 4791:
//
//	+-----+------------------------+-----------+-----+------+
//	| BTH | extension headers ...  | payload   | pad | ICRC |
//	| 12  | per opcode, 0..40 B    | 0..MTU    | 0-3 | 4    |
//	+-----+------------------------+-----------+-----+------+
//
// The opcode in the BTH alone decides which extension headers follow and in
// which order (see [Opcode] and [Opcode.Headers]); the pad count in the BTH
// brings the payload to a multiple of four bytes; the ICRC is a CRC-32 over the
// masked IP and UDP headers and the whole packet (see [Envelope.ICRC]).
//
// # Views
//
// Each header is a byte-slice type ([BTH], [RETH], [AETH], ...) whose methods read
// and write the wire fields in place, named after the IBTA specification. Like
// the header types of gVisor's netstack, views do not bound-check: a view must be
// at least its Size constant long. Views obtained from [Parse] always are.
// Construction goes through the matching Fields struct and Encode, or through
// [AppendPacket] for a whole packet.
//
// # Receiving
//
// [Parse] validates a packet and fills a caller-owned [Parsed] without
// allocating. The views it hands out alias the caller's buffer.
//
// # Sending
//
// [AppendPacket] writes the headers, payload and zero pad; [Envelope.PutICRC]
// then stamps the ICRC for the IP/UDP framing the packet will travel in, in
// one CRC pass and without allocating.
//
// # ICRC over UDP sockets
//
// The ICRC covers the IPv4 Identification field, which a UDP socket neither
// lets a receiver see nor (when connected) lets a sender predict. Senders use
// unconnected sockets, whose packets carry ID 0 with DF set, and say so in
// their [Envelope]. Receivers of IPv4 packets from other stacks use
// [VerifyICRCIPv4AnyID], which accepts a packet iff some ID makes its ICRC
// match. IPv6 has no such field and verifies exactly.
//
// # Sequence numbers
//
// [PSN] is the 24-bit packet sequence number with wrap-aware arithmetic.
//
// # Errors
//
// Malformed input never panics: every function that reads untrusted bytes returns
// one of the sentinel errors in this package (ErrTruncated, ErrUnknownOpcode,
// ...), which callers match with errors.Is.
package packet
