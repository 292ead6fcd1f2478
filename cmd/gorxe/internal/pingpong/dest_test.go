package pingpong

import (
	"bytes"
	"errors"
	"net/netip"
	"os"
	"testing"

	"github.com/gorxe/gorxe"
)

// The testdata files hold the TCP payloads of real ibv_*_pingpong runs between two kernel rxe
// hosts (server 10.99.0.2, client 10.99.0.3, -g 1), one file per direction.

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gid(s string) gorxe.GID { return gorxe.GID(netip.MustParseAddr(s).As16()) }

var (
	clientGID = gid("::ffff:10.99.0.3")
	serverGID = gid("::ffff:10.99.0.2")
)

func TestParseMsgGolden(t *testing.T) {
	tests := []struct {
		file string
		want Dest
	}{
		{"rc-client.bin", Dest{QPN: 0x11, PSN: 0x5e6589, GID: clientGID}},
		{"rc-server.bin", Dest{QPN: 0x11, PSN: 0x5dc87b, GID: serverGID}},
		{"uc-client.bin", Dest{QPN: 0x12, PSN: 0xfca6cb, GID: clientGID}},
		{"uc-server.bin", Dest{QPN: 0x12, PSN: 0x1ccceb, GID: serverGID}},
		{"ud-client.bin", Dest{QPN: 0x13, PSN: 0x576ab5, GID: clientGID}},
		{"ud-server.bin", Dest{QPN: 0x13, PSN: 0xb54fae, GID: serverGID}},
		{"srq-client.bin", Dest{QPN: 0x14, PSN: 0x022028, GID: clientGID}},
		{"srq-server.bin", Dest{QPN: 0x14, PSN: 0x279f4b, GID: serverGID}},
	}
	for _, tc := range tests {
		b := readGolden(t, tc.file)
		got, err := ParseMsg(b[:MsgLen])
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if got != tc.want {
			t.Errorf("%s: ParseMsg = %+v, want %+v", tc.file, got, tc.want)
		}
		if enc := got.AppendMsg(nil); !bytes.Equal(enc, b[:MsgLen]) {
			t.Errorf("%s: AppendMsg = %q, want the captured %q", tc.file, enc, b[:MsgLen])
		}
	}
}

// TestGoldenClientStreams checks the whole client side of each captured exchange: the address
// messages, then "done" with its NUL.
func TestGoldenClientStreams(t *testing.T) {
	for _, tc := range []struct {
		file  string
		count int
	}{{"rc-client.bin", 1}, {"uc-client.bin", 1}, {"ud-client.bin", 1}, {"srq-client.bin", srqMsgs}} {
		b := readGolden(t, tc.file)
		if len(b) != tc.count*MsgLen+len(doneMsg) {
			t.Fatalf("%s: %d bytes", tc.file, len(b))
		}
		var dests []Dest
		for i := range tc.count {
			d, err := ParseMsg(b[i*MsgLen : (i+1)*MsgLen])
			if err != nil {
				t.Fatalf("%s message %d: %v", tc.file, i, err)
			}
			dests = append(dests, d)
		}
		real := 1
		if tc.count == srqMsgs {
			real = 16 // the default -q; the other 240 entries are zero
			for i, d := range dests[:real] {
				if d.QPN != 0x14+uint32(i) || d.GID != clientGID {
					t.Errorf("%s message %d = %+v", tc.file, i, d)
				}
			}
			for i, d := range dests[real:] {
				if d != (Dest{}) {
					t.Errorf("%s message %d = %+v, want zero", tc.file, real+i, d)
				}
			}
		}
		if enc := encodeMsgs(dests[:real], tc.count); !bytes.Equal(enc, b[:tc.count*MsgLen]) {
			t.Errorf("%s: encodeMsgs differs from the capture", tc.file)
		}
		if !bytes.Equal(b[tc.count*MsgLen:], doneMsg) {
			t.Errorf("%s: ends with %q, want %q", tc.file, b[tc.count*MsgLen:], doneMsg)
		}
	}
}

func TestParseMsgRejects(t *testing.T) {
	good := readGolden(t, "rc-client.bin")[:MsgLen]
	mutate := func(i int, c byte) []byte {
		b := bytes.Clone(good)
		b[i] = c
		return b
	}
	tests := map[string][]byte{
		"short":             good[:51],
		"long":              append(bytes.Clone(good), 0),
		"no NUL":            mutate(51, '0'),
		"colon moved":       mutate(4, '0'),
		"bad LID digit":     mutate(0, 'x'),
		"bad QPN digit":     mutate(7, 'g'),
		"bad PSN digit":     mutate(13, ' '),
		"bad GID digit":     mutate(40, 'z'),
		"perftest preamble": []byte("0000:000000:000000:00000000:00000000000000000000000000000000000"[:MsgLen]),
		"empty":             nil,
	}
	for name, b := range tests {
		if _, err := ParseMsg(b); !errors.Is(err, ErrBadMessage) {
			t.Errorf("%s: ParseMsg = %v, want ErrBadMessage", name, err)
		}
	}
	// Upper-case hex is what sscanf accepts too.
	up := bytes.ToUpper(good)
	if d, err := ParseMsg(up); err != nil || d.PSN != 0x5e6589 {
		t.Errorf("upper case: %+v, %v", d, err)
	}
}

func TestAppendMsgMasks(t *testing.T) {
	got := string(Dest{LID: 0xffff, QPN: 0x1abcdef, PSN: 0xff123456, GID: gid("fe80::1")}.AppendMsg(nil))
	want := "ffff:abcdef:123456:fe800000000000000000000000000001\x00"
	if got != want {
		t.Fatalf("AppendMsg = %q, want %q", got, want)
	}
}

func FuzzParseMsg(f *testing.F) {
	f.Add(readGoldenF(f, "rc-client.bin")[:MsgLen])
	f.Add(readGoldenF(f, "srq-server.bin")[MsgLen*20 : MsgLen*21])
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseMsg(b)
		if err != nil {
			return
		}
		back, err := ParseMsg(d.AppendMsg(nil))
		if err != nil || back != d {
			t.Fatalf("round trip of %q: %+v, %v", b, back, err)
		}
	})
}

func readGoldenF(f *testing.F, name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		f.Fatal(err)
	}
	return b
}
