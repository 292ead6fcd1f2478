package tool

import (
	"context"
	"errors"
	"time"

	"github.com/gorxe/gorxe/cm/rdmacm"
)

// Linger bounds how long a tool, as it ends, waits for its peers to answer its disconnection:
// long enough for the DREP of a peer that is still there (the exchange completes and the counters
// show it), short enough that a peer that has gone, whose DREQ the CM would retry for a minute
// and more, never holds the tool up. The C tools wait for nothing: rdma_disconnect sends the DREQ
// and returns, and the kernel finishes the exchange after the process has exited. A gorxe tool's
// device ends with the tool, so it waits this little instead.
const Linger = 2 * time.Second

// Hangup ends a tool's RDMA-CM connections (nil entries are skipped): it disconnects each (the
// DREQ, or the DREP to a peer that disconnected first), waits for the answers until Linger has
// passed or ctx ends, whichever is first, and closes them. A peer that does not answer in time is
// no failure of the tool; the connections' timewait is not waited for either, as closing the
// device ends it. Call it before the device's session closes, so the exchange is counted.
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
	return errors.Join(errs...)
}
