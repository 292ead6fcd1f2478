// Package dump reads RoCEv2 packets from pcap and pcapng captures and prints
// them one line each, field by field with explanations, or as JSON lines;
// it is the library behind `gorxe dump`.
//
// Frames are decoded with gopacket and the gorxe layers package, from
// Ethernet (with 802.1Q tags), Linux cooked (SLL and SLL2) or raw IP link
// types; frames that are not UDP to or from port 4791, or another port the
// caller names or a pcapng capture announces (see capture.PortNote), are skipped. The
// headers are shown as the packet package's header table describes them, so
// a header added there is dumped without changes here. The ICRC
// of every packet is checked against the IP and UDP headers captured with it,
// which include the IPv4 Identification, so the check covers all 32 bits. A
// management datagram to QP1 is decoded too (Packet.MAD): its common header
// and, through cm/mad's views, the connection manager message it carries,
// under Wireshark's field names.
//
// # Errors
//
// A file that is not a capture fails with ErrNotCapture, one that ends in the
// middle of a record with ErrTruncatedCapture. A frame that cannot be decoded
// (too short for its headers, cut by the capture's snap length, a malformed
// RoCE packet) yields a *FrameError, and the dump goes on with the next frame.
package dump
