package mad

// MAD is a whole CM management datagram: the [Header] followed by the
// message data. A MAD must be at least [Size] bytes; methods do not
// bound-check, and [Parse] returns only MADs that are.
type MAD []byte

// New returns a zeroed 256-byte CM MAD whose header names attr and tid. The
// caller encodes the message into [MAD.Data] through the matching view.
func New(attr AttrID, tid uint64) MAD {
	m := make(MAD, Size)
	f := CMHeader(attr, tid)
	m.Header().Encode(&f)
	return m
}

// Header returns the view of the MAD header.
func (m MAD) Header() Header { return Header(m[:HeaderSize:HeaderSize]) }

// Data returns the message data after the header, which the message views
// ([REQ], [REP], ...) read.
func (m MAD) Data() []byte { return m[HeaderSize:Size:Size] }

// Parse checks that b holds a CM MAD this package can decode and returns it
// trimmed to [Size] bytes. Longer input is accepted (a UD payload may be
// followed by nothing else, but a capture may carry trailing bytes); the
// extra bytes are ignored. It returns ErrTruncated, ErrBaseVersion, ErrClass,
// ErrClassVersion, ErrMethod or ErrUnknownAttribute for anything else.
func Parse(b []byte) (MAD, error) {
	if len(b) < Size {
		return nil, ErrTruncated
	}
	m := MAD(b[:Size:Size])
	h := m.Header()
	switch {
	case h.BaseVersion() != BaseVersion:
		return nil, ErrBaseVersion
	case h.Class() != ClassCM:
		return nil, ErrClass
	case h.ClassVersion() != ClassVersionCM:
		return nil, ErrClassVersion
	case h.Method() != MethodSend:
		return nil, ErrMethod
	case !h.AttrID().Known():
		return nil, ErrUnknownAttribute
	}
	return m, nil
}
