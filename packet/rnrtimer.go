package packet

import "time"

// rnrTimerMicros is IBTA table 45, the RNR NAK timer field encodings, in microseconds. Code 25 is
// 61.44 ms as the spec gives it; kernel rxe's copy of the table has 61410 there.
var rnrTimerMicros = [32]uint32{
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
}

// RNRTimer returns the delay a 5-bit RNR NAK timer code stands for: how long a requester waits
// after an RNR NAK before it retries, and what a QP's min_rnr_timer attribute asks of its peer.
func RNRTimer(code uint8) time.Duration {
	return time.Duration(rnrTimerMicros[code&syndromeValueMask]) * time.Microsecond
}
