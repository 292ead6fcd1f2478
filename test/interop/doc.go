// Command interop proves that gorxe interoperates with the Linux kernel's rxe driver running the
// standard tools. It boots kernel rxe in qemu (the host kernel has no RDMA support), on a bridge in
// a network namespace of its own, and runs rdma-core's pingpongs and perftest in both roles: gorxe
// on the host as client against the C tool in the VM as server, and the reverse, with IPv4 and IPv6
// GIDs (a few tools also on the link-local GIDs at index 0), path MTU 1024 and 4096, message sizes
// from 1 byte to 4 MiB, and the RC tools under about 2 % packet loss. The RDMA-CM tools, rping,
// ucmatose, udaddy (UD, resolved with SIDR) and rdma_server / rdma_client, run in both roles too,
// with IPv4 and IPv6 addresses (rdma_server IPv4 only): they connect through the connection
// manager's MADs on QP1 (a kernel server's readiness is read from the rdma tool's list of CM IDs,
// since it opens no socket). The distribution's own pingpongs (RC, UC, UD, SRQ) and perftest's
// ib_write_bw, ib_read_bw and ib_send_bw (RC and UD) also run unmodified on the host on gorxe's C
// library (role "clib", built with `make clib` into the cache; if the build fails, those rows
// fail) against the same tools in the VM, in both roles, IPv4, path MTU 1024 and 4096; so do the
// distribution's RDMA-CM tools, rping, ucmatose, udaddy, rdma_server / rdma_client and perftest
// with -R (ib_send_bw RC and UD, ib_write_bw), IPv4. Such a C server on the library prints nothing
// to await, so it is taken as listening once its process has bound UDP 4791, which the library
// does when the program listens. A perftest -R client on the library may connect before its kernel
// server listens, which the distribution's perftest cannot recover from (see maxEarlyConnects):
// such a run, told apart by the kernel's refusal in the capture, is run again. Every run is captured on the VM's bridge port; `gorxe dump`
// verifies the ICRC of every packet, and the capture is checked against rxe's own packet
// counters. A kernel rxe <-> kernel rxe run between two VMs comes first as the control.
//
// It needs root, installs its own Debian packages, downloads one kernel image package and builds
// its own initramfs, guest agent and gorxe's C library; artefacts go to test/interop/.cache. It
// prints a pass/fail table and exits non-zero on any failure. Usage (from the repository root):
//
//	go run ./test/interop [-run REGEXP] [-count N] [-baseline none|short|full] [-skip-gorxe] [-keep]
package main
