package packet

import "encoding/binary"

// ICRCSize is the length of the invariant CRC that ends every RoCEv2 packet.
const ICRCSize = 4

// MinSize is the length of the shortest valid packet: a BTH and an ICRC.
const MinSize = BTHSize + ICRCSize

// Parsed is a validated RoCEv2 packet: the result of [Parse]. Its views alias
// the buffer that was parsed, which the caller still owns; they stay valid
// only as long as that buffer is not reused, and callers must treat them as
// read-only unless they own the buffer outright.
//
// A zero Parsed holds no packet: its header methods return nil views. One
// Parsed can be reused for many packets; Parse overwrites it entirely.
type Parsed struct {
	b      []byte // the whole packet, BTH to ICRC, capacity clipped
	info   *opInfo
	payEnd int // end of the payload; the pad follows up to len(b)-ICRCSize
}

// Parse validates the RoCEv2 packet b (a UDP payload, starting at the BTH) and
// fills p with it. It walks the BTH, the extension headers the opcode table
// prescribes, the payload, the pad and the ICRC, checking that every one fits
// and that the pad count and payload length are consistent with the opcode.
// It does not check the ICRC (that needs the IP and UDP headers; see
// [Envelope.VerifyICRC]), nor any field value that needs QP state.
//
// Parse never allocates and never panics. On error p is left holding no
// packet, and the error is one of ErrTruncated, ErrBadTransportVersion,
// ErrUnknownOpcode, ErrBadPad, ErrUnexpectedPayload or ErrBadPayloadLength.
func Parse(b []byte, p *Parsed) error {
	*p = Parsed{}
	if len(b) < MinSize {
		return ErrTruncated
	}
	b = b[:len(b):len(b)]
	if b[bthFlags]&bthTVerMask != 0 {
		return ErrBadTransportVersion
	}
	info := &opTable[b[bthOpcode]]
	if info.kind == KindInvalid {
		return ErrUnknownOpcode
	}
	hdrLen := int(info.hdrLen)
	if len(b) < hdrLen+ICRCSize {
		return ErrTruncated
	}
	body := len(b) - hdrLen - ICRCSize // payload + pad
	pad := int(b[bthFlags]&bthPadMask) >> bthPadShift
	switch {
	case info.payload == payloadNone && body != 0:
		return ErrUnexpectedPayload
	case pad > body || body&3 != 0:
		return ErrBadPad
	case info.payload == payloadFixed && body-pad != int(info.fixedLen):
		return ErrBadPayloadLength
	}
	*p = Parsed{b: b, info: info, payEnd: len(b) - ICRCSize - pad}
	return nil
}

// Bytes returns the whole packet, BTH to ICRC, or nil if p holds no packet.
func (p *Parsed) Bytes() []byte { return p.b }

// Opcode returns the packet's opcode (0 if p holds no packet).
func (p *Parsed) Opcode() Opcode {
	if p.b == nil {
		return 0
	}
	return Opcode(p.b[bthOpcode])
}

// BTH returns the packet's Base Transport Header (nil if p holds no packet).
func (p *Parsed) BTH() BTH {
	if p.b == nil {
		return nil
	}
	return BTH(p.b[:BTHSize:BTHSize])
}

// Ext returns the bytes of extension header h, or nil if the packet lacks
// it. Convert them to h's view type to read them ([RETH], [AETH], ...), or
// read them through the fields of [Header.Desc].
func (p *Parsed) Ext(h Header) []byte {
	if p.info == nil || !p.info.headers.Has(h) {
		return nil
	}
	off := int(p.info.off[h])
	end := off + h.Size()
	return p.b[off:end:end]
}

// HeaderLen returns the length of the BTH and extension headers, which is
// the offset of the payload.
func (p *Parsed) HeaderLen() int {
	if p.info == nil {
		return 0
	}
	return int(p.info.hdrLen)
}

// Payload returns the payload, without pad. It is empty (not nil) for a
// packet without payload.
func (p *Parsed) Payload() []byte {
	if p.info == nil {
		return nil
	}
	return p.b[p.info.hdrLen:p.payEnd:p.payEnd]
}

// PadCount returns the number of pad bytes between the payload and the ICRC.
func (p *Parsed) PadCount() int {
	if p.b == nil {
		return 0
	}
	return len(p.b) - ICRCSize - p.payEnd
}

// ICRC returns the invariant CRC carried by the packet, decoded from its
// little-endian wire form.
func (p *Parsed) ICRC() uint32 {
	if len(p.b) < ICRCSize {
		return 0
	}
	return binary.LittleEndian.Uint32(p.b[len(p.b)-ICRCSize:])
}

// Headers decodes every header of the packet into h, zeroing the fields of
// the extension headers the opcode does not carry. Encoding h again with
// [AppendPacket] and the same payload reproduces the packet's bytes.
func (p *Parsed) Headers(h *Headers) {
	*h = Headers{}
	if p.b == nil {
		return
	}
	h.BTH = p.BTH().Fields()
	for hd := range p.info.headers.All() {
		h.decodeExt(hd, p.Ext(hd))
	}
}
