// Package mad encodes and decodes the management datagrams of the InfiniBand
// communication manager (IBTA volume 1, chapter 12): the 24-byte MAD header,
// every CM message (REQ, MRA, REJ, REP, RTU, DREQ, DREP, LAP, APR, SIDR_REQ,
// SIDR_REP) and the RDMA-CM private-data header that IP-addressed connections
// carry in a REQ.
//
// # Transport
//
// On RoCE a CM MAD travels as the payload of one UD SEND_ONLY packet to QP1
// (Q_Key 0x80010000, P_Key 0xFFFF). It is always [Size] (256) bytes: the
// [Header] followed by [DataSize] bytes of message, which end in a fixed-size
// private-data area. CM messages carry no length for their private data: the
// receiver sees the whole area, zero-padded.
//
// # Views
//
// As in package packet, each message is a byte-slice type ([REQ], [REP], ...)
// over the message data that follows the MAD header, with accessors named
// after the IBTA fields and offsets matching the spec's tables (byte 0 is the
// first byte after the header). A view must be at least its Size constant
// long; [Parse] hands out views that are. Construction goes through the
// matching Fields struct and Encode. Views alias the buffer they were cut
// from, and so do the private-data slices they return.
//
// # Errors
//
// Decoding never panics on untrusted input: [Parse] returns one of the
// sentinel errors of this package, which callers match with errors.Is.
package mad
