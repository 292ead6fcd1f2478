package packet

import "iter"

// Size returns the length of the header in bytes, or 0 for an unknown Header.
func (h Header) Size() int {
	if h >= NumHeaders {
		return 0
	}
	return headerTable[h].Size
}

// String returns the IBTA abbreviation of the header ("RETH", "ImmDt", ...).
func (h Header) String() string {
	if h >= NumHeaders {
		return "Header(" + string(hexDigit(uint8(h)>>4)) + string(hexDigit(uint8(h))) + ")"
	}
	return headerTable[h].Name
}

// HeaderSet is a set of extension headers.
type HeaderSet uint16

// Has reports whether h is in s.
func (s HeaderSet) Has(h Header) bool { return h < NumHeaders && s&(1<<h) != 0 }

// Len returns the number of headers in s.
func (s HeaderSet) Len() int {
	n := 0
	for h := Header(0); h < NumHeaders; h++ {
		if s.Has(h) {
			n++
		}
	}
	return n
}

// Size returns the total length of the headers in s.
func (s HeaderSet) Size() int {
	n := 0
	for h := Header(0); h < NumHeaders; h++ {
		if s.Has(h) {
			n += h.Size()
		}
	}
	return n
}

// All yields the headers of s in wire order.
func (s HeaderSet) All() iter.Seq[Header] {
	return func(yield func(Header) bool) {
		for h := Header(0); h < NumHeaders; h++ {
			if s.Has(h) && !yield(h) {
				return
			}
		}
	}
}

// String lists the headers of s in wire order, joined by "+", or "none".
func (s HeaderSet) String() string {
	if s == 0 {
		return "none"
	}
	out := ""
	for h := range s.All() {
		if out != "" {
			out += "+"
		}
		out += h.String()
	}
	return out
}

func headerSet(hs ...Header) HeaderSet {
	var s HeaderSet
	for _, h := range hs {
		s |= 1 << h
	}
	return s
}
