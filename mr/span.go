package mr

import "unsafe"

// Span is a validated, translated byte range of one region, obtained from LookupRemote or
// LookupLocal. It holds the region: until Release, the region cannot be changed or destroyed, so
// keep it for one packet's copy, not across packets. The zero Span is empty. A Span must not be
// copied and released twice.
type Span struct {
	m   *MR
	off uint64 // region-relative offset of the first byte
	n   uint64
}

// Len returns the span's length in bytes.
func (s *Span) Len() uint64 { return s.n }

// Segment returns the contiguous memory starting off bytes into the span, up to the end of its
// page or of the span; nil when off is outside. Iterate with off += len(seg) for zero-copy access.
func (s *Span) Segment(off uint64) []byte {
	if s.m == nil || off >= s.n {
		return nil
	}
	seg := s.m.pt.segment(s.off + off)
	if rest := s.n - off; uint64(len(seg)) > rest {
		seg = seg[:rest]
	}
	return seg
}

// View returns the n bytes starting off bytes into the span as one slice of the registered
// memory, without copying them; ok is false when they are not in adjacent memory of a region
// registered over one buffer (a fast-registration region's pages are the program's to replace,
// and its invalidations must not leave a view behind). The view holds nothing: it stays valid
// only until the program deregisters the region, so the caller must be done with it before a
// deregistration returns (gorxe's device waits for its workers' sends in Dereg and Rereg).
func (s *Span) View(off uint64, n int) (view []byte, ok bool) {
	if s.m == nil || s.m.fastReg || n <= 0 || off+uint64(n) > s.n {
		return nil, false
	}
	first := s.Segment(off)
	if len(first) == 0 {
		return nil, false
	}
	end := uintptr(unsafe.Pointer(unsafe.SliceData(first))) + uintptr(len(first))
	for got := len(first); got < n; {
		seg := s.Segment(off + uint64(got))
		if len(seg) == 0 || uintptr(unsafe.Pointer(unsafe.SliceData(seg))) != end {
			return nil, false
		}
		got += len(seg)
		end += uintptr(len(seg))
	}
	return unsafe.Slice(unsafe.SliceData(first), n), true
}

// CopyIn writes src into the span starting off bytes in and returns how many bytes fit (like copy:
// never beyond the span).
func (s *Span) CopyIn(off uint64, src []byte) int {
	n := 0
	for len(src) > 0 {
		seg := s.Segment(off)
		if len(seg) == 0 {
			break
		}
		c := copy(seg, src)
		src = src[c:]
		off += uint64(c)
		n += c
	}
	return n
}

// CopyOut reads from the span starting off bytes in into dst and returns how many bytes were copied.
func (s *Span) CopyOut(dst []byte, off uint64) int {
	n := 0
	for len(dst) > 0 {
		seg := s.Segment(off)
		if len(seg) == 0 {
			break
		}
		c := copy(dst, seg)
		dst = dst[c:]
		off += uint64(c)
		n += c
	}
	return n
}

// Release drops the span's hold on its region; the span becomes empty. Safe to call on an empty
// span and twice on the same variable.
func (s *Span) Release() {
	if s.m != nil {
		s.m.g.leave()
	}
	*s = Span{}
}
