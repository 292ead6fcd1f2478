// Package trace draws a RoCEv2 capture as a ladder diagram, one vertical line per queue pair
// and one arrow per packet, as SVG or as a self-contained HTML page; it is the library behind
// `gorxe trace`.
//
// # Reading the diagram
//
// Each endpoint is an IP address and a queue pair number. A packet names only its destination
// QP, so the sender's QPN is taken from the DETH (UD) or from the reverse direction of the same
// connection: both ends of an RC or UC connection send from the same UDP source port (the
// kernel derives it from the product of the two QPNs, or from the connection manager's flow
// label), so the packets coming back on that port name the sender's QPN. Failing that, a QP
// known at the sender's address whose product with the destination QPN gives the port is the
// sender; otherwise its QPN is shown as "?".
//
// Time runs down the page, one row per packet, in seconds since the capture's first packet;
// rows stand further apart the longer the pause between them (on a log scale, up to a limit),
// and a silence longer than Options.Gap is drawn as a break labelled with its length. Runs of MIDDLE packets of one message collapse into one
// band labelled with their count, PSN range and bytes (the HTML page expands a band when it is
// clicked and shows the `gorxe dump -v` explanation of a packet when its arrow is clicked; j and
// k then step through the packets).
//
// Per sender and direction (requests, responses), a PSN seen again is a retransmission, or a
// duplicate when it copies the sender's previous packet byte for byte, at once and with nothing
// from the peer in between (a resend waits for a NAK or a timer); a repeated ACK is a duplicate.
// A READ request for PSNs the responder already answered asks again for the rest of a READ.
// A capture gorxe wrote keeps the packets its fault injection dropped, marked in a packet
// comment: each is drawn where it was sent, as an arrow that stops short at a cross, and counts
// as a loss. Other captures see only what crossed the network: there a gap in a sender's
// request PSNs, or inside one READ response, that a later packet fills marks a loss. Gaps never
// filled are not losses: the capture may simply have left packets out.
package trace
