package tool

import (
	"context"
	"errors"
	"time"

	"github.com/gorxe/gorxe/cm/rdmacm"
)

// Linger bounds how long a tool, as it ends, waits for its connections to end: long enough for a
// peer that is still there to answer the DREQ and for the connection's timewait (one local ACK
// timeout, about half a second with the default path) to pass, short enough that a peer that has
// gone, whose DREQ the CM would retry for a minute and more, never holds the tool up. The C tools
// wait for nothing: rdma_disconnect sends the DREQ and the kernel finishes the exchange and the
// timewait after the process has exited. A gorxe tool's device ends with the tool, so it waits
// this little instead.
const Linger = 2 * time.Second

// Hangup ends a tool's RDMA-CM connections (nil entries are skipped): it disconnects each (the
// DREQ, or the DREP to a peer that disconnected first), closes it, and waits until each has left
// its timewait, Linger has passed or ctx ends, whichever is first. A peer that does not answer in
// time is no failure of the tool. Waiting out the timewait matters to the next run of a tool: its
// new device numbers its QPs as this one did, and a peer still holding this connection in its
// own timewait would refuse the new one as stale. Call it before the session closes the device,
// so the exchange is counted.
func Hangup(ctx context.Context, conns ...*rdmacm.Conn) error {
	lctx, cancel := context.WithTimeout(ctx, Linger)
	defer cancel()
	errs := make([]error, len(conns))
	done := make(chan int, len(conns))
	live := 0
	for i, c := range conns {
		if c == nil {
			continue
		}
		live++
		go func() {
			if err := c.Disconnect(lctx); err != nil && lctx.Err() == nil {
				errs[i] = err
			}
			done <- i
		}()
	}
	for range live {
		<-done
	}
	for _, c := range conns {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	for _, c := range conns {
		if c == nil {
			continue
		}
		select {
		case <-c.Done():
		case <-lctx.Done():
		}
	}
	return errors.Join(errs...)
}
