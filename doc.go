// Package gorxe is a software RoCEv2 provider: libibverbs-style verbs objects (device, PD, MR, MW,
// CQ, QP, SRQ, AH) whose traffic is the InfiniBand transport over UDP port 4791, byte-compatible with
// Linux's Soft-RoCE driver (rxe) and with RoCE NICs.
//
// The API maps one to one onto libibverbs, in Go style: ibv_open_device becomes [Open],
// ibv_alloc_pd becomes [Device.AllocPD], ibv_reg_mr becomes [PD.RegMR], ibv_post_send becomes
// [QP.PostSend], and so on. Names of statuses, opcodes, access flags and QP states follow the
// libibverbs constants (IBV_WC_REM_ACCESS_ERR is [WCRemAccessErr], IBV_QPS_RTS is [QPStateRTS]).
//
// No kernel module, no root and no special hardware are needed: a Device binds UDP 4791 on one or
// more local addresses and runs the transport in its own goroutines.
package gorxe
