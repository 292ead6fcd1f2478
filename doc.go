// Package gorxe is a software RoCEv2 provider: libibverbs-style verbs objects (device, PD, MR, MW,
// CQ, QP, SRQ, AH) whose traffic is the InfiniBand transport over UDP port 4791, byte-compatible with
// Linux's Soft-RoCE driver (rxe) and with RoCE NICs.
//
// The API maps one to one onto libibverbs, in Go style: ibv_open_device becomes [Open],
// ibv_alloc_pd becomes [Device.AllocPD], ibv_reg_mr becomes [PD.RegMR], ibv_post_send becomes
// [QP.PostSend], and so on. Names of statuses, opcodes, access flags and QP states follow the
// libibverbs constants (IBV_WC_REM_ACCESS_ERR is [WCRemAccessErr], IBV_QPS_RTS is [QPStateRTS]).
// Every type and constant a program needs is in this package; the IDs that name single counters
// are in package counter.
//
// No kernel module, no root and no special hardware are needed: a Device binds UDP 4791 on one or
// more local addresses and runs the transport in its own goroutines.
//
// # Devices and addresses
//
// [Open] binds a device to one address ([Config.Addr]) or to every address of a network interface
// ([Config.Interface]). The port's GID table is laid out as rxe's: index 0 is the link-local GID
// derived from the interface's MAC, then the IPv4-mapped GIDs, then the other IPv6 addresses. A
// device bound to 127.0.0.1 therefore has its address at GID index 1, which is what
// `ibv_rc_pingpong -g 1` expects.
//
// # Goroutines
//
// A device runs one goroutine reading the network and a fixed set of workers ([Config.Workers]);
// each QP belongs to one worker, chosen by its QP number, which runs all of its protocol work:
// received packets, posted work requests, attribute changes and timers, one at a time. Verbs may
// be called from any goroutine. Protocol work runs where it arises when the QP's worker is free:
// [QP.PostSend] on a QP with nothing outstanding builds and sends the first packets itself, as
// rxe's post_send runs its requester inline, and otherwise leaves the work to whoever runs the
// worker; it never waits for the network. [QP.Modify] runs on the worker and returns once the
// change is in effect. [Device.Close] stops everything: outstanding work requests complete with
// [WCWRFlushErr] and no goroutine is left behind. The calls that wait for something
// ([Device.GetAsyncEvent], [CompChannel.GetEvent], [CQ.Wait]) return when it can no longer come:
// once the device is closed, after handing out what was already queued, with [ErrDeviceClosed],
// and once their channel or CQ is destroyed, with [ErrDestroyed].
//
// # Errors
//
// Every verb returns an [*Error] naming the libibverbs verb ("reg_mr", "modify_qp", ...) whose cause
// matches one of the package's errors with errors.Is ([ErrDeviceClosed], [ErrMissingAttr],
// [ErrInvalidGIDIndex], ...); its text names the package and the verb once, then the cause:
// "gorxe: modify_qp: RC QP RESET->RTS: invalid state transition". A rejected Modify also carries a [*ModifyError] naming the missing or
// disallowed attributes, and a rejected post a [*PostError] naming the work request. Packets that
// fail a check are dropped and counted, never reported as errors: see [Device.Counters],
// [QP.Counters] and [Device.QPCounters], whose names and help texts are listed in package counter;
// package metrics exports them to Prometheus.
//
// # Testing
//
// [Config.Network] replaces the sockets with any datagram network, such as the in-memory fabric
// of the netio package, and [Config.Clock] replaces the clock, so retransmission and RNR timers can
// be stepped deterministically. [Config.Faults] (or the GORXE_FAULTS environment variable) makes a
// device lose, reorder, duplicate, corrupt or delay what it sends, and [Config.Port] (or
// GORXE_PORT) moves it off UDP 4791.
package gorxe
