// Package stack runs a gorxe device's traffic: it owns the network connection, the workers
// (run locks with a goroutine each), the receive loop with the checks that need no QP state
// (ICRC, P_Key, QPN), the multicast fan-out, the packet buffer pools, the timers, the QPN index
// and the device's statistics. The verbs facade gets one typed handle per QP ([QP]) and calls a
// method on it after each verb that gives the transport work.
//
// # Workers and the run lock
//
// Each QP belongs to one worker, chosen by QPN. Engines run under the worker's run lock on
// whichever goroutine holds it: the receive goroutine for the packets it has just read, a
// poster for the work it has just posted, a verb for its control request (Modify and Destroy
// run there, after the packets already queued for the worker), or the worker's own goroutine,
// which takes over what the others found the lock busy for and fires the worker's one timer.
// Running work where it arises saves a goroutine wake-up per hand-off, which on a small machine
// costs as much as the protocol work itself. An engine never sees two callers at once.
//
// # The two packet paths
//
// Send: the facade posts to the qp package's send ring and calls [QP.Posted]; the engine runs at
// once on the poster's goroutine if the QP had nothing outstanding and the worker is free (as
// rxe's post_send runs its requester inline), and otherwise the lock holder picks it up. The
// engine builds packets into pooled buffers; the worker sends the batch through the connection.
//
// Receive: the receive goroutine reads a batch, parses each datagram, drops and counts what fails
// the ICRC, P_Key or QPN checks, copies multicast packets to every attached QP, and hands each
// worker its share of the batch, running the last share itself. The worker hands each QP's
// packets to its engine as a burst (ReceiveMore for all but the last).
//
// # Latency mode
//
// With Config.BusyPoll set, posts always run the engine on the poster's goroutine (waiting for
// the run lock rather than handing over), the receive goroutine polls the socket for BusyPoll
// before it sleeps, and [Runtime.Poll] lets a busy-polling application read the network and run
// the engines itself, so that neither a packet nor its completion waits for a goroutine wake-up.
package stack
