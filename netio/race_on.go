//go:build race

package netio

import "sync/atomic"

// ioSync tells the race detector what the kernel guarantees: whatever a goroutine wrote before
// sending a datagram is visible to the goroutine that receives it. The standard library annotates
// its own read and write system calls this way; sendmmsg and recvmmsg issued through a RawConn
// are not, so two gorxe devices in one process (one writing registered memory, the other reading
// it after a completion that travelled as a datagram) would be reported as racing.
var ioSync atomic.Uint64

func raceReleaseIO() { ioSync.Add(1) }
func raceAcquireIO() { ioSync.Load() }
