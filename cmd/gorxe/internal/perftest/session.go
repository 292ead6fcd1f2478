package perftest

import (
	"fmt"
	"time"

	"github.com/gorxe/gorxe"
)

// Stream is the out-of-band connection as the exchange uses it; *oob.Conn implements it.
type Stream interface {
	ReadFull(p []byte, op string) error
	Write(p []byte, op string) error
	// SetTimeout bounds each following read and write; 0 removes the bound.
	SetTimeout(d time.Duration)
	// ExplainClose says what the peer closing the connection means from now on.
	ExplainClose(why string)
}

// peerStopped is what a closed connection means once the peer has answered as a perftest tool:
// perftest's exchange has no message for "I failed", so a side that fails or is interrupted
// simply closes the connection, and its own output says why.
const peerStopped = "the peer stopped the test early; its output says why"

// session runs perftest's out-of-band exchanges over a Stream. Every exchange is symmetric and
// strictly ordered: the client writes its message and then reads the server's, the server reads
// and then writes, so neither side ever has two messages in flight.
type session struct {
	s      Stream
	client bool
	// cm is set for an exchange over RDMA-CM (-R, -z): perftest sends its key messages there in
	// binary (AppendKeyCM) and ends without the "done" message.
	cm  bool
	buf []byte
}

func newSession(s Stream, client, cm bool) *session {
	return &session{s: s, client: client, cm: cm, buf: make([]byte, 0, KeyLen)}
}

// xchg sends mine and receives len(theirs) bytes into theirs, in the order of the side.
func (x *session) xchg(mine, theirs []byte, what string) error {
	write := func() error { return x.s.Write(mine, "couldn't send "+what) }
	read := func() error { return x.s.ReadFull(theirs, "couldn't read remote "+what) }
	if x.client {
		if err := write(); err != nil {
			return err
		}
		return read()
	}
	if err := read(); err != nil {
		return err
	}
	return write()
}

// versions exchanges version messages and checks that the peer is recent enough.
func (x *session) versions() (string, error) {
	theirs := make([]byte, VersionLen)
	if err := x.xchg(AppendVersion(x.buf[:0], Version), theirs, "version"); err != nil {
		return "", err
	}
	text, num, err := ParseVersion(theirs)
	if err != nil {
		return text, err
	}
	if !versionAtLeast(num, MinPeerVersion) {
		return text, fmt.Errorf("%w: the peer runs perftest %s; versions older than %.2f are not supported", ErrPeerVersion, text, MinPeerVersion)
	}
	return text, nil
}

// sysData exchanges the page size (perftest's cycle buffer) and the cache line size, and returns
// the larger of each side's value, as both sides then use.
func (x *session) sysData(cycleBuffer, cacheLine int32) (int32, int32, error) {
	out := [2]int32{cycleBuffer, cacheLine}
	for i, what := range []string{"page size", "cache line size"} {
		theirs := make([]byte, SysDataLen)
		if err := x.xchg(AppendSysData(x.buf[:0], out[i]), theirs, what); err != nil {
			return 0, 0, err
		}
		v, err := ParseSysData(theirs)
		if err != nil {
			return 0, 0, err
		}
		out[i] = max(out[i], v)
	}
	return out[0], out[1], nil
}

// mtu exchanges path MTUs and returns the one both sides use: the smaller, unless the peer's is
// not a valid ibv_mtu.
func (x *session) mtu(mine gorxe.MTU) (gorxe.MTU, error) {
	theirs := make([]byte, MTULen)
	if err := x.xchg(AppendMTU(x.buf[:0], mine), theirs, "MTU"); err != nil {
		return 0, err
	}
	if m, ok := ParseMTU(theirs); ok && m < mine {
		return m, nil
	}
	return mine, nil
}

// handShake exchanges key messages (perftest's ctx_hand_shake): the key exchange proper, and
// later the barriers the tests place between their phases.
func (x *session) handShake(mine *Dest) (Dest, error) {
	if x.cm {
		theirs := make([]byte, KeyLenCM)
		if err := x.xchg(AppendKeyCM(x.buf[:0], mine), theirs, "address"); err != nil {
			return Dest{}, err
		}
		return ParseKeyCM(theirs)
	}
	theirs := make([]byte, KeyLen)
	if err := x.xchg(AppendKey(x.buf[:0], mine), theirs, "address"); err != nil {
		return Dest{}, err
	}
	return ParseKey(theirs)
}

// reports exchanges bandwidth reports, field by field.
func (x *session) reports(mine *Report) (Report, error) {
	var r Report
	theirs := make([]byte, ReportFieldLen)
	for i := range ReportFields {
		if err := x.xchg(AppendReportField(x.buf[:0], mine, i), theirs, "report"); err != nil {
			return r, err
		}
		if err := SetReportField(&r, i, theirs); err != nil {
			return r, err
		}
	}
	return r, nil
}

// closeConnection is perftest's ctx_close_connection: a last hand-shake, then "done". Older
// perftest versions write "done" after the hand-shake and nobody reads it; newer ones only close.
// gorxe writes it, as the older ones do, and ignores a failure: the peer may be gone already.
// Over RDMA-CM no perftest version writes it (the peer has no receive posted for it).
func (x *session) closeConnection(mine *Dest) error {
	if _, err := x.handShake(mine); err != nil {
		return err
	}
	if !x.cm {
		_ = x.s.Write(doneMsg, "couldn't send done")
	}
	return nil
}
