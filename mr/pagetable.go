package mr

import "math/bits"

// pageTable maps region-relative byte offsets to memory. Page i covers region offsets
// [i*size - fbo, (i+1)*size - fbo); its slice is trimmed to the region, so pages[0] starts at the
// first registered byte and the last page ends at the last one. The concatenation of pages is
// exactly the registered bytes: translation cannot reach anything else.
type pageTable struct {
	shift  uint8  // log2 of the page size
	fbo    uint64 // first byte offset: where the region starts within the first page
	length uint64
	pages  [][]byte
}

// pageShift validates a page size: a power of two within [MinPageSize, MaxPageSize].
func pageShift(size int) (uint8, error) {
	if size < MinPageSize || size > MaxPageSize || size&(size-1) != 0 {
		return 0, ErrPageSize
	}
	return uint8(bits.TrailingZeros64(uint64(size))), nil
}

// pagesFor is the number of pages needed for length bytes starting fbo into the first page.
func pagesFor(shift uint8, fbo, length uint64) uint64 {
	return (fbo + length + 1<<shift - 1) >> shift
}

// contiguous builds a table over buf, whose first byte sits at address addr; pages follow the
// address's alignment, as a pinned user buffer's would.
func contiguous(buf []byte, addr uintptr, shift uint8) pageTable {
	size := uint64(1) << shift
	fbo := uint64(addr) & (size - 1)
	length := uint64(len(buf))
	pages := make([][]byte, 0, pagesFor(shift, fbo, length))
	first := min(size-fbo, length)
	pages = append(pages, buf[:first:first])
	for rest := buf[first:]; len(rest) > 0; {
		n := min(uint64(len(rest)), size)
		pages = append(pages, rest[:n:n])
		rest = rest[n:]
	}
	return pageTable{shift: shift, fbo: fbo, length: length, pages: pages}
}

// fill installs a caller-supplied page list into t, reusing t.pages' capacity so a fast
// registration does not allocate. Each used page must be exactly one page long; pages beyond the
// region are ignored. Returns ErrPageList when the list cannot hold the region.
func (t *pageTable) fill(src [][]byte, shift uint8, offset, length uint64) error {
	size := uint64(1) << shift
	if length == 0 || offset >= size {
		return ErrPageList
	}
	need := pagesFor(shift, offset, length)
	if need > uint64(len(src)) || need > uint64(cap(t.pages)) {
		return ErrPageList
	}
	for _, p := range src[:need] {
		if uint64(len(p)) != size {
			return ErrPageList
		}
	}
	t.pages = t.pages[:0]
	end := offset + length // region end relative to the first page's start
	for i, p := range src[:need] {
		lo, hi := uint64(0), size
		if i == 0 {
			lo = offset
		}
		if uint64(i) == need-1 {
			hi = end - uint64(i)*size
		}
		t.pages = append(t.pages, p[lo:hi:hi])
	}
	t.shift, t.fbo, t.length = shift, offset, length
	return nil
}

// clear drops every page reference so released memory is not kept alive.
func (t *pageTable) clear() {
	clear(t.pages)
	t.pages = t.pages[:0]
	t.length, t.fbo = 0, 0
}

// segment returns the contiguous bytes from region offset off to the end of its page, or nil when
// off is outside the region.
func (t *pageTable) segment(off uint64) []byte {
	if off >= t.length {
		return nil
	}
	x := off + t.fbo
	i := x >> t.shift
	in := x & (1<<t.shift - 1)
	if i == 0 {
		in -= t.fbo
	}
	if i >= uint64(len(t.pages)) {
		return nil
	}
	p := t.pages[i]
	if in >= uint64(len(p)) {
		return nil
	}
	return p[in:]
}
