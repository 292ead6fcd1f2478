// Package transport is gorxe's sans-I/O InfiniBand transport engine: for one queue pair it turns
// posted work requests into RoCEv2 packets (requester), executes incoming requests against
// registered memory (responder) and retires work on acknowledgements (completer), for RC, UC and UD.
//
// It is one of gorxe's engine packages, used by the device layer and by tests that drive an engine
// on its own. Programs embed gorxe through the root package, github.com/gorxe/gorxe, which offers
// the verbs; nothing here is needed to use them.
//
// Nothing in this package starts goroutines, opens sockets, reads a clock or logs: every entry point
// takes the current time, appends the packets to send to an [Output] (with the [Event]s a device
// may log, of the kinds it asked for), pushes completions into the QP's completion queues and
// reports its next deadline. The device layer owns sockets, timers and
// goroutines, and serialises calls per QP.
package transport
