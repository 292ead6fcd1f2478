// Package capture writes the datagrams a device sends and receives to a pcapng file, framed in
// Ethernet, IP and UDP as they cross the wire, so Wireshark, tshark and gorxe dump read it.
//
// A [Writer]'s Tap method is a netio.TapFunc: hand it to a device as its gorxe.Config.Tap, close
// the Writer after the device, and every datagram is written in the order it was handed to the network, outgoing ones as
// outbound and incoming ones as inbound (pcapng's direction flag), with what fault injection did
// to a packet (lost, duplicate, corrupted, delayed) in a packet comment. Nothing needs root: the
// file is built from what the device already knows, not sniffed.
//
// The interface block names the UDP port RoCE runs on ([PortComment]), so a capture made on a
// port other than 4791 decodes without being told the port again.
package capture
