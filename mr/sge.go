package mr

// SGE is a scatter/gather element of a work request (struct ibv_sge).
type SGE struct {
	Addr   uint64 // IOVA in the region named by LKey
	Length uint32
	LKey   uint32
}

// SGEsLength returns the total length of an SGE list.
func SGEsLength(sges []SGE) uint64 {
	var n uint64
	for i := range sges {
		n += uint64(sges[i].Length)
	}
	return n
}

// ValidateSGEs checks every non-empty SGE against the key table for a QP with protection domain pd
// (need is AccessLocalWrite for receive or READ-response buffers, 0 for send buffers) and returns
// the total length. Zero-length SGEs are skipped without a key check.
func (t *Table) ValidateSGEs(pd *PD, need Access, sges []SGE) (uint64, error) {
	var total uint64
	for i := range sges {
		g := &sges[i]
		if g.Length == 0 {
			continue
		}
		s, err := t.LookupLocal(g.LKey, pd, need, g.Addr, uint64(g.Length))
		if err != nil {
			return 0, err
		}
		s.Release()
		total += uint64(g.Length)
	}
	return total, nil
}

// Cursor is a position in an SGE list, kept by the transport per message so consecutive packets
// gather from (or scatter into) the right bytes. The zero Cursor is an empty list.
type Cursor struct {
	sges  []SGE
	i     int    // current SGE
	off   uint32 // offset within it
	pos   uint64 // bytes before the position
	total uint64
}

// Reset points the cursor at the start of sges. The cursor keeps the slice, which must not change
// while the message is in progress.
func (c *Cursor) Reset(sges []SGE) {
	*c = Cursor{sges: sges, total: SGEsLength(sges)}
}

// Pos returns the number of bytes before the cursor.
func (c *Cursor) Pos() uint64 { return c.pos }

// Len returns the total length of the list.
func (c *Cursor) Len() uint64 { return c.total }

// Remaining returns the bytes after the cursor.
func (c *Cursor) Remaining() uint64 { return c.total - c.pos }

// Seek moves the cursor to pos bytes from the start (for example, to resend from a PSN). Returns
// ErrLength beyond the end.
func (c *Cursor) Seek(pos uint64) error {
	if pos > c.total {
		return ErrLength
	}
	c.i, c.off, c.pos = 0, 0, 0
	c.advance(pos)
	return nil
}

// advance moves forward n bytes (n <= Remaining) and past exhausted SGEs.
func (c *Cursor) advance(n uint64) {
	c.pos += n
	for c.i < len(c.sges) {
		left := uint64(c.sges[c.i].Length - c.off)
		if n < left {
			c.off += uint32(n)
			return
		}
		n -= left
		c.i++
		c.off = 0
		if n == 0 && c.i < len(c.sges) && c.sges[c.i].Length != 0 {
			return
		}
	}
}

// Gather copies the next len(dst) bytes of the SGE list into dst (a packet payload) and advances
// the cursor. Each SGE is checked against pd and read access. ErrLength if dst is longer than
// Remaining; on a key error the cursor stays at the failing SGE. Allocation-free.
func (t *Table) Gather(dst []byte, c *Cursor, pd *PD) error {
	return t.move(dst, c, pd, 0)
}

// Scatter copies src (a packet payload) into the next bytes of the SGE list and advances the
// cursor, so a message's packets land where they belong. Each SGE needs AccessLocalWrite.
// ErrLength if src is longer than Remaining. Allocation-free.
func (t *Table) Scatter(c *Cursor, pd *PD, src []byte) error {
	return t.move(src, c, pd, AccessLocalWrite)
}

// move is Gather (need 0, memory to b) and Scatter (need LOCAL_WRITE, b to memory).
func (t *Table) move(b []byte, c *Cursor, pd *PD, need Access) error {
	if uint64(len(b)) > c.Remaining() {
		return ErrLength
	}
	for len(b) > 0 && c.i < len(c.sges) {
		g := &c.sges[c.i]
		n := min(uint64(len(b)), uint64(g.Length-c.off))
		if n == 0 {
			c.advance(0)
			continue
		}
		s, err := t.LookupLocal(g.LKey, pd, need, g.Addr+uint64(c.off), n)
		if err != nil {
			return err
		}
		if need == 0 {
			s.CopyOut(b[:n], 0)
		} else {
			s.CopyIn(0, b[:n])
		}
		s.Release()
		b = b[n:]
		c.advance(n)
	}
	return nil
}

// View returns the next n bytes of the SGE list as one slice of registered memory, without
// copying them, and advances the cursor: for a sender that hands the kernel the payload where it
// lies. ok is false, with the cursor unchanged, when the bytes are not in one SGE or Span.View
// declines them; the caller then copies them with Gather. The SGE is checked as Gather checks it,
// with the same errors.
func (t *Table) View(c *Cursor, pd *PD, n int) (view []byte, ok bool, err error) {
	if uint64(n) > c.Remaining() {
		return nil, false, ErrLength
	}
	if n == 0 || c.i >= len(c.sges) || uint64(c.sges[c.i].Length-c.off) < uint64(n) {
		return nil, false, nil
	}
	g := &c.sges[c.i]
	s, err := t.LookupLocal(g.LKey, pd, 0, g.Addr+uint64(c.off), uint64(n))
	if err != nil {
		return nil, false, err
	}
	view, ok = s.View(0, n)
	s.Release()
	if ok {
		c.advance(uint64(n))
	}
	return view, ok, nil
}
