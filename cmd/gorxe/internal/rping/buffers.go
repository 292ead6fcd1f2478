package rping

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/gorxe/gorxe"
)

// infoSize is the control message: big-endian buffer address (u64), R_Key (u32), length (u32).
const infoSize = 16

// buffers are one connection's registered memory, laid out as rping's.
type buffers struct {
	pd         *gorxe.PD
	recv, send []byte // control messages in and out
	rdma       []byte // the server's READ target and WRITE source; the client's sink
	start      []byte // the client's source (nil on the server)
	mrs        []*gorxe.MR
	recvMR     *gorxe.MR
	sendMR     *gorxe.MR
	rdmaMR     *gorxe.MR
	startMR    *gorxe.MR
}

// newBuffers allocates a PD and registers the buffers on it.
func newBuffers(dev *gorxe.Device, size int, client bool) (b *buffers, err error) {
	b = &buffers{recv: make([]byte, infoSize), send: make([]byte, infoSize), rdma: make([]byte, size)}
	if b.pd, err = dev.AllocPD(); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			b.free()
		}
	}()
	reg := func(buf []byte, access gorxe.Access) (*gorxe.MR, error) {
		mr, err := b.pd.RegMR(buf, access)
		if err == nil {
			b.mrs = append(b.mrs, mr)
		}
		return mr, err
	}
	remote := gorxe.AccessLocalWrite | gorxe.AccessRemoteRead | gorxe.AccessRemoteWrite
	if b.recvMR, err = reg(b.recv, gorxe.AccessLocalWrite); err != nil {
		return nil, err
	}
	if b.sendMR, err = reg(b.send, 0); err != nil {
		return nil, err
	}
	if b.rdmaMR, err = reg(b.rdma, remote); err != nil {
		return nil, err
	}
	if client {
		b.start = make([]byte, size)
		if b.startMR, err = reg(b.start, remote); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// recvWR is the receive of one control message.
func (b *buffers) recvWR() gorxe.RecvWR {
	return gorxe.RecvWR{ID: wrRecv, SGList: []gorxe.SGE{{Addr: b.recvMR.Addr(), Length: infoSize, LKey: b.recvMR.LKey()}}}
}

// sendWR sends the control message.
func (b *buffers) sendWR() gorxe.SendWR {
	return gorxe.SendWR{ID: wrSend, Opcode: gorxe.WRSend, Flags: gorxe.SendSignaled,
		SGList: []gorxe.SGE{{Addr: b.sendMR.Addr(), Length: infoSize, LKey: b.sendMR.LKey()}}}
}

// advertise writes mr's address, R_Key and the ping size into the control message.
func (b *buffers) advertise(mr *gorxe.MR, size int) {
	binary.BigEndian.PutUint64(b.send[0:], mr.Addr())
	binary.BigEndian.PutUint32(b.send[8:], mr.RKey())
	binary.BigEndian.PutUint32(b.send[12:], uint32(size))
}

// peer decodes a received control message.
func (b *buffers) peer() (addr uint64, rkey, size uint32) {
	return binary.BigEndian.Uint64(b.recv[0:]), binary.BigEndian.Uint32(b.recv[8:]), binary.BigEndian.Uint32(b.recv[12:])
}

// free deregisters the buffers and releases the PD.
func (b *buffers) free() error {
	var errs []error
	for _, mr := range b.mrs {
		errs = append(errs, mr.Dereg())
	}
	if b.pd != nil {
		errs = append(errs, b.pd.Dealloc())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("freeing buffers: %w", err)
	}
	return nil
}

// Work request IDs, so a completion says which step it ends.
const (
	wrRecv uint64 = iota + 1
	wrSend
	wrRead
	wrWrite
)

// fillPing writes ping number n into buf as rping does: the prefix, then letters from 'A' to 'z'
// starting at start and wrapping, then a NUL in the last byte. It returns the next ping's
// starting letter.
func fillPing(buf []byte, n int, start byte) byte {
	i := copy(buf, fmt.Sprintf("rdma-ping-%d: ", n))
	for c := start; i < len(buf); i++ {
		buf[i] = c
		if c++; c > 'z' {
			c = 'A'
		}
	}
	buf[len(buf)-1] = 0
	if start++; start > 'z' {
		start = 'A'
	}
	return start
}

// cString returns buf up to its first NUL.
func cString(buf []byte) []byte {
	for i, c := range buf {
		if c == 0 {
			return buf[:i]
		}
	}
	return buf
}
