package transport

import "time"

// The Local ACK Timeout encoding of IBTA chapter 9 (the RNR NAK timer encoding is packet.RNRTimer).

// ackTimeout converts the QP's 5-bit Local ACK Timeout into the retransmit interval,
// 4.096 µs × 2^timeout (IBTA 9.7.6.1.3). Zero disables the timer; gorxe follows rxe and the spec
// there.
func ackTimeout(timeout uint8) time.Duration {
	if timeout == 0 {
		return 0
	}
	return time.Duration(4096<<(timeout&31)) * time.Nanosecond
}
