// Command uring measures, on this machine, what io_uring would save gorxe's UDP paths against
// the sendmmsg/recvmmsg and UDP_SEGMENT/UDP_GRO calls netio makes today, and counts the system
// calls per datagram each way: the cost of an empty busy poll; whether a thread spinning on the
// completion ring in user space sees a multishot receive's completions without entering the
// kernel, under each set of setup flags, and from another thread; an 80-byte ping-pong; and a
// one-way stream of 4112-byte datagrams.
//
// Both ends run in this process on threads of their own (runtime.LockOSThread), as io_uring
// queues a receive's completion work to the thread that armed it. Where io_uring_setup is
// refused (no kernel support, seccomp, kernel.io_uring_disabled) the io_uring rows are skipped
// with the reason.
//
// Usage:
//
//	uring [-duration 1s] [-trials 200] [-window 20ms] [-sections poll,visibility,pingpong,stream]
//	      [-ping-rings default,coop+flag,defer+flag,defer] [-stream-ring defer+flag]
//	      [-src 127.0.0.1] [-dst 127.0.0.2] [-json]
package main
