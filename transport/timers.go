package transport

import (
	"time"

	"github.com/gorxe/gorxe/packet"
)

// Timer encodings of IBTA chapter 9: the Local ACK Timeout and the RNR NAK timer field.

// ackTimeout converts the QP's 5-bit Local ACK Timeout into the retransmit interval,
// 4.096 µs × 2^timeout (IBTA 9.7.6.1.3). Zero disables the timer; gorxe follows rxe and the spec
// there.
func ackTimeout(timeout uint8) time.Duration {
	if timeout == 0 {
		return 0
	}
	return time.Duration(4096<<(timeout&31)) * time.Nanosecond
}

// RNRDelay returns how long a requester waits after an RNR NAK carrying the given 5-bit timer code.
func RNRDelay(code uint8) time.Duration { return packet.RNRTimer(code) }
