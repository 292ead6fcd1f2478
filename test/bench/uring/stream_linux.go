//go:build linux

package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

const (
	streamSize = 4112 // a full packet of MTU 4096
	sendBatch  = 64   // datagrams per sendmmsg or io_uring_enter without segmentation
	gsoSegs    = 15   // datagrams per UDP_SEGMENT send: 15 × 4112 fits one IPv4 datagram
	gsoRuns    = 4    // UDP_SEGMENT sends per sendmmsg or io_uring_enter
	drainWait  = 100 * time.Millisecond
)

// A sender path and a receiver path of the one-way stream.
const (
	sendMmsg     = "sendmmsg"
	sendGSO      = "sendmmsg+UDP_SEGMENT"
	sendUring    = "io_uring SEND"
	sendUringGSO = "io_uring SENDMSG+UDP_SEGMENT"
	recvMmsg     = "recvmmsg"
	recvGRO      = "recvmmsg+UDP_GRO"
	recvUring    = "io_uring RECVMSG multishot"
	recvUringGRO = "io_uring RECVMSG multishot+UDP_GRO"
)

// streamPairs are the rows: each sender against each receiver of its kind.
var streamPairs = [][2]string{
	{sendMmsg, recvMmsg}, {sendUring, recvMmsg}, {sendMmsg, recvUring}, {sendUring, recvUring},
	{sendGSO, recvGRO}, {sendUringGSO, recvGRO}, {sendGSO, recvUringGRO}, {sendUringGSO, recvUringGRO},
}

// threadCPU is the user and system time of the calling thread.
func threadCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// streamSide is what one side of a stream row reports.
type streamSide struct {
	datagrams uint64
	calls     uint64        // sendmmsg, recvmmsg or io_uring_enter
	empty     uint64        // receives that found nothing
	reads     uint64        // receives or completions that returned data
	rearms    uint64        // multishot receives armed again after running out of buffers
	cpu       time.Duration // sender: CPU time of its thread (on loopback it includes delivery)
	window    time.Duration // receiver: first to last read
	err       error
}

// stream sends 4112-byte datagrams one way for cfg.duration, each side on its own thread.
func stream(cfg config, sender, receiver string, mode ringMode) (streamRow, error) {
	row := streamRow{Sender: sender, Receiver: receiver}
	if isUring(sender) || isUring(receiver) {
		row.Ring = mode.Name
	}
	sfd, rfd, err := socketPair(cfg.src, cfg.dst)
	if err != nil {
		return row, err
	}
	defer unix.Close(sfd)
	defer unix.Close(rfd)
	if receiver == recvGRO || receiver == recvUringGRO {
		if err := unix.SetsockoptInt(rfd, unix.SOL_UDP, unix.UDP_GRO, 1); err != nil {
			return row, fmt.Errorf("UDP_GRO: %w", err)
		}
	}
	var stop atomic.Bool
	rxReady := make(chan error, 1)
	rxDone := make(chan streamSide, 1)
	go func() {
		var res streamSide
		res.err = onThread(func() error { return receive(rfd, receiver, mode, &stop, rxReady, &res) })
		rxDone <- res
	}()
	if err := <-rxReady; err != nil {
		return row, err
	}
	var tx streamSide
	tx.err = onThread(func() error { return send(cfg, sfd, sender, mode, &tx) })
	time.Sleep(drainWait)
	stop.Store(true)
	rx := <-rxDone
	if tx.err != nil {
		return row, tx.err
	}
	if rx.err != nil {
		return row, rx.err
	}
	row.Sent, row.Delivered = tx.datagrams, rx.datagrams
	if rx.window > 0 {
		row.DeliveredPPS = float64(rx.datagrams) / rx.window.Seconds()
	}
	if tx.datagrams > 0 {
		row.Loss = 1 - float64(rx.datagrams)/float64(tx.datagrams)
		row.SendCallsPerDatagram = float64(tx.calls) / float64(tx.datagrams)
		row.SendCPUNSPerDatagram = float64(tx.cpu.Nanoseconds()) / float64(tx.datagrams)
	}
	if rx.datagrams > 0 {
		row.RecvCallsPerDatagram = float64(rx.calls) / float64(rx.datagrams)
		row.RecvEmptyPerDatagram = float64(rx.empty) / float64(rx.datagrams)
		row.DatagramsPerRead = float64(rx.datagrams) / float64(rx.reads)
		row.RearmsPerDatagram = float64(rx.rearms) / float64(rx.datagrams)
	}
	return row, nil
}

func isUring(path string) bool { return len(path) > 8 && path[:8] == "io_uring" }

// send offers full batches for cfg.duration.
func send(cfg config, fd int, path string, mode ringMode, res *streamSide) error {
	a, err := newArena(sendBatch*streamSize + gsoRuns*gsoSegs*streamSize + 1<<16)
	if err != nil {
		return err
	}
	defer a.free()
	gso := path == sendGSO || path == sendUringGSO
	var b *mmsgBatch
	if gso {
		b = newBatch(a, gsoRuns, gsoSegs*streamSize, true)
		for i := range gsoRuns {
			putSegment(b.ctls[i], streamSize)
			b.hdrs[i].hdr.control, b.hdrs[i].hdr.controllen = addrOf(b.ctls[i]), cmsgSpace
		}
	} else {
		b = newBatch(a, sendBatch, streamSize, false)
	}
	var r *ring
	if isUring(path) {
		if r, err = newRing(256, 1024, mode.flags); err != nil {
			return err
		}
		defer r.close()
	}
	cpu0 := threadCPU()
	start := time.Now()
	for time.Since(start) < cfg.duration {
		switch path {
		case sendMmsg:
			n, err := b.send(fd, sendBatch, streamSize, 0)
			if err != nil {
				return err
			}
			res.datagrams += uint64(n)
		case sendGSO:
			n, err := b.send(fd, gsoRuns, gsoSegs*streamSize, streamSize)
			if err != nil {
				return err
			}
			res.datagrams += uint64(n * gsoSegs)
		case sendUring:
			for i := range sendBatch {
				if err := r.queueSend(fd, b.bufs[i]); err != nil {
					return err
				}
			}
			if err := r.flushSends(); err != nil {
				return err
			}
			res.datagrams += uint64(sendBatch - r.sendFailures())
		case sendUringGSO:
			for i := range gsoRuns {
				if err := r.queueSendmsg(fd, &b.hdrs[i].hdr); err != nil {
					return err
				}
			}
			if err := r.flushSends(); err != nil {
				return err
			}
			res.datagrams += uint64((gsoRuns - r.sendFailures()) * gsoSegs)
		default:
			return fmt.Errorf("unknown sender %q", path)
		}
	}
	res.cpu = threadCPU() - cpu0
	res.calls = b.calls
	if r != nil {
		res.calls = r.enters
	}
	return nil
}

// receive busy-polls until stop, counting datagrams (a GRO buffer counts its segments).
func receive(fd int, path string, mode ringMode, stop *atomic.Bool, ready chan<- error, res *streamSide) error {
	a, err := newArena(64*(1<<16+64) + 1<<16)
	if err != nil {
		ready <- err
		return err
	}
	defer a.free()
	gro := path == recvGRO || path == recvUringGRO
	var first, last time.Time
	count := func(n, seg int) {
		if seg > 0 {
			res.datagrams += uint64((n + seg - 1) / seg)
		} else {
			res.datagrams++
		}
	}
	var poll func() (int, error)
	switch path {
	case recvMmsg, recvGRO:
		b := newBatch(a, 64, 1<<16, gro)
		defer func() { res.calls, res.empty = b.calls, b.empty }()
		poll = func() (int, error) {
			n, err := b.recv(fd)
			for i := range n {
				m := &b.hdrs[i]
				seg := 0
				if gro {
					seg = groSegment(b.ctls[i][:m.hdr.controllen])
				}
				count(int(m.n), seg)
			}
			return n, err
		}
	case recvUring, recvUringGRO:
		r, err := newRing(64, 4096, mode.flags)
		if err != nil {
			ready <- err
			return err
		}
		defer r.close()
		// Without GRO every datagram takes a buffer of its own.
		nbuf, size := 1024, streamSize+256
		if gro {
			nbuf, size = 256, 1<<16+256
		}
		rx, err := newUringRx(r, mode, fd, a, true, nbuf, size)
		if err != nil {
			ready <- err
			return err
		}
		defer func() { res.calls, res.rearms = r.enters, rx.rearms }()
		poll = func() (int, error) {
			e0 := r.enters
			n, err := rx.poll(func(p []byte, seg int) { count(len(p), seg) })
			if n == 0 && r.enters > e0 {
				res.empty++
			}
			return n, err
		}
	default:
		err := fmt.Errorf("unknown receiver %q", path)
		ready <- err
		return err
	}
	ready <- nil
	for !stop.Load() {
		n, err := poll()
		if err != nil {
			return err
		}
		if n > 0 {
			res.reads += uint64(n)
			last = time.Now()
			if first.IsZero() {
				first = last
			}
		}
	}
	res.window = last.Sub(first)
	return nil
}
