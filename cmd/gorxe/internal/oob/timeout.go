package oob

import "time"

// SetTimeout changes the limit of each following read and write; 0 removes it. A tool waits
// without a limit while the peer runs a test of unknown length: the connection's context still
// interrupts the wait, and TCP keepalive still ends it if the peer's host vanishes.
func (c *Conn) SetTimeout(d time.Duration) {
	c.timeout = d
	if d <= 0 {
		c.timeout = 0
		_ = c.c.SetDeadline(time.Time{})
	}
}
