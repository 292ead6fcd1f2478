package packet

import "slices"

// PacketLen returns the length of a packet with opcode op and payloadLen bytes
// of payload: headers, payload, pad and ICRC.
func PacketLen(op Opcode, payloadLen int) int {
	return op.HeaderLen() + payloadLen + padLen(payloadLen) + ICRCSize
}

// padLen returns the number of pad bytes that bring n to a multiple of 4.
func padLen(n int) int { return -n & 3 }

// AppendPacket appends to dst a packet with the headers h and the given
// payload, zero pad bytes and a zero ICRC, and returns the extended slice.
// The BTH pad count is derived from len(payload); h.BTH.PadCount is ignored.
// Compute the ICRC afterwards with [Envelope.PutICRC], once the IP and UDP
// framing is known.
//
// It returns ErrUnknownOpcode, ErrBadTransportVersion, ErrUnexpectedPayload or
// ErrBadPayloadLength (and dst unchanged) for an undefined opcode, a non-zero
// transport version or a payload that does not suit the opcode, so every
// packet it builds passes [Parse].
func AppendPacket(dst []byte, h *Headers, payload []byte) ([]byte, error) {
	pkt, room, err := AppendPacketRoom(dst, h, len(payload))
	copy(room, payload)
	return pkt, err
}

// AppendPacketRoom is AppendPacket for a payload the caller writes in place:
// it encodes the headers, zero pad bytes and a zero ICRC around payloadLen
// bytes it leaves unwritten, and returns the extended slice and the payload's
// place in it. A sender copies message data straight from registered memory
// into that place, so the payload is copied once.
func AppendPacketRoom(dst []byte, h *Headers, payloadLen int) (pkt, payload []byte, err error) {
	op := h.BTH.Opcode
	e := &opTable[op]
	switch {
	case e.kind == KindInvalid:
		return dst, nil, ErrUnknownOpcode
	case h.BTH.TransportVersion&bthTVerMask != 0:
		return dst, nil, ErrBadTransportVersion
	case e.payload == payloadNone && payloadLen != 0:
		return dst, nil, ErrUnexpectedPayload
	case e.payload == payloadFixed && payloadLen != int(e.fixedLen):
		return dst, nil, ErrBadPayloadLength
	case payloadLen < 0:
		return dst, nil, ErrBadPayloadLength
	}
	n := PacketLen(op, payloadLen)
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	b := dst[start:]
	bth := h.BTH
	bth.PadCount = uint8(padLen(payloadLen))
	BTH(b).Encode(&bth)
	for hd := range e.headers.All() {
		h.encodeExt(hd, b[e.off[hd]:int(e.off[hd])+hd.Size()])
	}
	payload = b[e.hdrLen : int(e.hdrLen)+payloadLen]
	clear(b[int(e.hdrLen)+payloadLen:]) // pad and ICRC
	return dst, payload, nil
}
