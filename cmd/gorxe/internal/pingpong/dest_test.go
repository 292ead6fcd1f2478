package pingpong

import (
	"bytes"
	"net/netip"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// The testdata files hold the TCP payloads of real ibv_*_pingpong runs between two kernel rxe
// hosts (server 10.99.0.2, client 10.99.0.3, -g 1), one file per direction.

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
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
		require.NoError(t, err, "%s", tc.file)
		assert.Equal(t, tc.want, got, "%s: ParseMsg = %+v, want %+v", tc.file, got, tc.want)
		enc := got.AppendMsg(nil)
		assert.Equal(t, b[:MsgLen], enc, "%s: AppendMsg = %q, want the captured %q", tc.file, enc, b[:MsgLen])
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
		require.Len(t, b, tc.count*MsgLen+len(doneMsg), "%s: %d bytes", tc.file, len(b))
		var dests []Dest
		for i := range tc.count {
			d, err := ParseMsg(b[i*MsgLen : (i+1)*MsgLen])
			require.NoError(t, err, "%s message %d", tc.file, i)
			dests = append(dests, d)
		}
		real := 1
		if tc.count == srqMsgs {
			real = 16 // the default -q; the other 240 entries are zero
			for i, d := range dests[:real] {
				assert.Equal(t, 0x14+uint32(i), d.QPN, "%s message %d = %+v", tc.file, i, d)
				assert.Equal(t, clientGID, d.GID, "%s message %d = %+v", tc.file, i, d)
			}
			for i, d := range dests[real:] {
				assert.Equal(t, (Dest{}), d, "%s message %d = %+v, want zero", tc.file, real+i, d)
			}
		}
		enc := encodeMsgs(dests[:real], tc.count)
		assert.Equal(t, b[:tc.count*MsgLen], enc, "%s: encodeMsgs differs from the capture", tc.file)
		assert.Equal(t, doneMsg, b[tc.count*MsgLen:], "%s: ends with %q, want %q", tc.file, b[tc.count*MsgLen:], doneMsg)
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
		_, err := ParseMsg(b)
		assert.ErrorIs(t, err, ErrBadMessage, "%s: ParseMsg = %v, want ErrBadMessage", name, err)
	}
	// Upper-case hex is what sscanf accepts too.
	up := bytes.ToUpper(good)
	d, err := ParseMsg(up)
	assert.NoError(t, err, "upper case: %+v, %v", d, err)
	assert.Equal(t, uint32(0x5e6589), d.PSN, "upper case: %+v, %v", d, err)
}

func TestAppendMsgMasks(t *testing.T) {
	got := string(Dest{LID: 0xffff, QPN: 0x1abcdef, PSN: 0xff123456, GID: gid("fe80::1")}.AppendMsg(nil))
	want := "ffff:abcdef:123456:fe800000000000000000000000000001\x00"
	require.Equal(t, want, got, "AppendMsg = %q, want %q", got, want)
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
		require.NoError(t, err, "round trip of %q: %+v, %v", b, back, err)
		require.Equal(t, d, back, "round trip of %q: %+v, %v", b, back, err)
	})
}

func readGoldenF(f *testing.F, name string) []byte {
	b, err := os.ReadFile("testdata/" + name)
	require.NoError(f, err)
	return b
}
