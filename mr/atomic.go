package mr

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Atomics operate on 64-bit words in host byte order, as a NIC on this machine would; the transport
// converts to and from the big-endian wire fields. Where the target word is 8-byte aligned in memory
// and contiguous (always, unless a registration places it at an odd address or across two pages of a
// non-contiguous page list) the operation is a sync/atomic instruction on the word itself, so it is
// atomic also against applications using sync/atomic on their own memory. Otherwise the word is
// updated under a lock striped by the address of its first byte. Whether a word takes the lock
// path depends only on its address and the page list, so every gorxe atomic on one word (through
// any region, table or device in the process) uses the same mechanism and they are all atomic with
// respect to each other. Plain RDMA writes are not atomic against atomics, as in IBTA.

// atomicStripes are the locks of the unaligned path, padded to a cache line each.
var atomicStripes [64]struct {
	sync.Mutex
	_ [56]byte
}

// FlushLevel is the selectivity level of a FLUSH (FETH): a range of a region, or the whole region.
type FlushLevel uint8

// Flush selectivity levels.
const (
	FlushRange FlushLevel = 0 // flush [va, va+length)
	FlushMR    FlushLevel = 1 // flush the whole region; va and length are ignored
)

// atomicTarget resolves the 8-byte target of an atomic and checks its alignment after the rkey,
// as the responder does: key errors win over misalignment.
func (t *Table) atomicTarget(rkey uint32, pd *PD, qpn uint32, need Access, va uint64) (Span, error) {
	s, err := t.resolve(rkey, pd, qpn, need, va, 8, true)
	if err != nil {
		return s, err
	}
	if va&7 != 0 {
		s.Release()
		return Span{}, ErrMisaligned
	}
	return s, nil
}

// word returns the target as a *uint64 when it is contiguous and aligned in memory, else nil.
func (s *Span) word() *uint64 {
	seg := s.Segment(0)
	if len(seg) < 8 || addrOf(seg)&7 != 0 {
		return nil
	}
	return (*uint64)(unsafe.Pointer(unsafe.SliceData(seg)))
}

// stripe returns the lock of the unaligned path for the span's first byte.
func (s *Span) stripe() *sync.Mutex {
	a := uint64(addrOf(s.Segment(0)))
	h := (a * 0x9e3779b97f4a7c15) >> 58 // Fibonacci hash to 6 bits
	return &atomicStripes[h].Mutex
}

func (s *Span) load() uint64 {
	var b [8]byte
	s.CopyOut(b[:], 0)
	return binary.NativeEndian.Uint64(b[:])
}

func (s *Span) store(v uint64) {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], v)
	s.CopyIn(0, b[:])
}

// CompareSwap executes an ATOMIC CmpSwap: if the word at va equals compare it becomes swap. It
// returns the original value. Needs AccessRemoteAtomic and an 8-byte aligned va.
func (t *Table) CompareSwap(rkey uint32, pd *PD, qpn uint32, va, compare, swap uint64) (uint64, error) {
	s, err := t.atomicTarget(rkey, pd, qpn, AccessRemoteAtomic, va)
	if err != nil {
		return 0, err
	}
	defer s.Release()
	if p := s.word(); p != nil {
		for {
			old := atomic.LoadUint64(p)
			if old != compare || atomic.CompareAndSwapUint64(p, old, swap) {
				return old, nil
			}
		}
	}
	mu := s.stripe()
	mu.Lock()
	defer mu.Unlock()
	old := s.load()
	if old == compare {
		s.store(swap)
	}
	return old, nil
}

// FetchAdd executes an ATOMIC FetchAdd: the word at va is incremented by add (wrapping), and the
// original value is returned. Needs AccessRemoteAtomic and an 8-byte aligned va.
func (t *Table) FetchAdd(rkey uint32, pd *PD, qpn uint32, va, add uint64) (uint64, error) {
	s, err := t.atomicTarget(rkey, pd, qpn, AccessRemoteAtomic, va)
	if err != nil {
		return 0, err
	}
	defer s.Release()
	if p := s.word(); p != nil {
		return atomic.AddUint64(p, add) - add, nil
	}
	mu := s.stripe()
	mu.Lock()
	defer mu.Unlock()
	old := s.load()
	s.store(old + add)
	return old, nil
}

// AtomicWrite executes an ATOMIC_WRITE: the 8 payload bytes are stored at va in one indivisible
// step, byte for byte as they arrived (like an 8-byte RDMA WRITE). Needs AccessRemoteWrite and an
// 8-byte aligned va.
func (t *Table) AtomicWrite(rkey uint32, pd *PD, qpn uint32, va uint64, payload [8]byte) error {
	s, err := t.atomicTarget(rkey, pd, qpn, AccessRemoteWrite, va)
	if err != nil {
		return err
	}
	defer s.Release()
	v := binary.NativeEndian.Uint64(payload[:])
	if p := s.word(); p != nil {
		atomic.StoreUint64(p, v)
		return nil
	}
	mu := s.stripe()
	mu.Lock()
	defer mu.Unlock()
	s.store(v)
	return nil
}

// Flush executes a FLUSH: need is AccessFlushGlobal and/or AccessFlushPersistent (the placement
// types requested). Memory here is ordinary RAM written by completed copies, so after the checks
// there is nothing left to do; the checks are those of the responder, with the range skipped for
// FlushMR.
func (t *Table) Flush(rkey uint32, pd *PD, qpn uint32, need Access, level FlushLevel, va, length uint64) error {
	if need == 0 || need&^(AccessFlushGlobal|AccessFlushPersistent) != 0 || level > FlushMR {
		return ErrAccessFlags
	}
	s, err := t.resolve(rkey, pd, qpn, need, va, length, level == FlushRange)
	if err != nil {
		return err
	}
	s.Release()
	return nil
}
