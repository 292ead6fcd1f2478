// Package rdmacm connects gorxe queue pairs the way librdmacm does: over IP addresses and ports,
// with the InfiniBand communication manager's MADs on the device's QP1.
//
// # Shape
//
// A device gets one Agent: the GSI queue pair (QP1) that sends and receives 256-byte MADs, a cm.Manager
// that runs the protocol, and two goroutines. One owns the manager and serialises every call into it
// (commands from Dial, Accept and Close, received MADs, and the one timer the manager's Deadline asks
// for); the other waits on QP1's completion queue and hands it the MADs that arrive. Open returns the
// device's agent, creating it on first use; Listen and Dial open it themselves. The agent stops when
// the last handle on it (agents, listeners, connections) is released.
//
// # Connections
//
// Dial sends a REQ to the listener at an address and port (the service ID of RDMA-CM's TCP port
// space, with the CMA private-data header naming both addresses) and returns once the connection is
// established; Listen and Accept are the passive side. Each connection owns a reliable-connected QP
// and its completion queues (or uses the caller's, Options.SendCQ), moved through INIT, RTR and RTS with the attributes the two CMs
// negotiated: the active side goes to RTR and RTS when the REP arrives and then sends the RTU, as
// librdmacm moves it; the passive side goes to RTR before it sends the REP and to RTS once
// established, as IBTA's CM has it (librdmacm moves it to RTS before the REP): when the RTU
// arrives, or when the QP's first packet raises Communication Established, which stands in for a
// lost RTU.
//
// Enhanced Connection Establishment rides along as librdmacm's rdma_set_local_ece,
// rdma_get_remote_ece and rdma_reject_ece have it: Options.ECE goes in the REQ or REP, the peer's
// is Request.RemoteECE and Conn.RemoteECE, and Request.RejectECE refuses a request's options (REJ
// reason 35). The package carries the vendor ID and options without interpreting them, as gorxe,
// like rxe, has no vendor options of its own.
//
// Close disconnects (DREQ, answered by a DREP) and releases the QP at once; the connection itself
// lingers in timewait so late MADs are answered, and Done is closed when it is gone. A peer's DREQ
// moves the QP to the error state (its posted work completes flushed) and is answered with a DREP.
// Events reports what happens to a connection after it was established.
//
// Closing the device ends the agent's work at once: every call still waiting (Accept, Dial,
// DialUD, Disconnect, ...) returns an error matching gorxe.ErrDeviceClosed that names the call,
// and every connection is over (Done closes) without a word to its peer.
//
// # UD endpoints
//
// DialUD, ListenUD and UDListener.Accept are the UDP port space's counterparts (udaddy): no
// connection, but a service ID resolution. DialUD sends a SIDR_REQ with the CMA header; Accept
// creates a UD QP and answers with a SIDR_REP naming it and RDMA-CM's Q_Key. Each side gets a
// UDConn: a UD QP in RTS, its completion queues and an address handle to the peer.
package rdmacm
