package stack

import "github.com/gorxe/gorxe/netio"

// The receive loop finds WaitReadable by type assertion and without it receives unordered, which
// works but lets a busy poller's batches overtake its own: the UDP backend must keep offering it.
var _ readableWaiter = (*netio.UDPConn)(nil)
