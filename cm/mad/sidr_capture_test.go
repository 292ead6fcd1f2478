package mad

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two udaddy runs between gorxe at 198.18.0.1 and kernel rxe (Debian 6.1) at 198.18.0.11, the
// first three frames of each: in testdata/kernel-rxe-udaddy-client.pcapng kernel rxe's udaddy
// client sends the SIDR_REQ (frame 1), gorxe answers (2) and the first UD message follows (3); in
// testdata/kernel-rxe-udaddy-server.pcapng gorxe sends the SIDR_REQ and kernel rxe's udaddy
// server answers (frame 2) with its QP 0x11, which frame 3 is sent to.
const (
	udaddyKernelClient = "testdata/kernel-rxe-udaddy-client.pcapng"
	udaddyKernelServer = "testdata/kernel-rxe-udaddy-server.pcapng"
)

// TestCaptureSIDR decodes kernel rxe's SIDR_REQ and SIDR_REP and re-encodes them from their
// fields to the same bytes.
func TestCaptureSIDR(t *testing.T) {
	udaddySID := ServiceID(PortSpaceUDP, 7174)
	require.Equal(t, uint64(0x01111c06), udaddySID)

	t.Run("kernel SIDR_REQ", func(t *testing.T) {
		m, err := Parse(pcapngMAD(t, udaddyKernelClient, 1))
		require.NoError(t, err)
		require.Equal(t, CMHeader(AttrSIDRREQ, 0x0000000291b72783), m.Header().Fields())
		r := SIDRREQ(m.Data())
		f := r.Fields()
		assert.Equal(t, uint32(0x8327b791), f.RequestID)
		assert.Equal(t, uint16(0xffff), f.PKey)
		assert.Equal(t, udaddySID, f.ServiceID)
		hdr, user, ok := SplitCMAPrivateData(f.PrivateData)
		require.True(t, ok)
		assert.Equal(t, CMAHeaderFields{SrcPort: 0xdd48, Src: netip.MustParseAddr("198.18.0.11"),
			Dst: netip.MustParseAddr("198.18.0.1")}, hdr)
		assert.Equal(t, make([]byte, SIDRREQPrivateDataSize-CMAHeaderSize), user, "udaddy sends no private data of its own")
		out := New(AttrSIDRREQ, 0x0000000291b72783)
		require.NoError(t, SIDRREQ(out.Data()).Encode(&f))
		require.Equal(t, []byte(m), []byte(out))
	})
	t.Run("gorxe's SIDR_REP to it", func(t *testing.T) {
		m := MAD(pcapngMAD(t, udaddyKernelClient, 2))
		require.Equal(t, CMHeader(AttrSIDRREP, 0x0000000291b72783), m.Header().Fields(), "the reply echoes the TID")
		r := SIDRREP(m.Data())
		assert.Equal(t, uint32(0x8327b791), r.RequestID())
		assert.Equal(t, SIDRSuccess, r.Status())
		assert.Equal(t, uint32(0x10), r.QPN())
		assert.Equal(t, uint32(UDPQKey), r.QKey())
	})
	t.Run("kernel SIDR_REP", func(t *testing.T) {
		req := MAD(pcapngMAD(t, udaddyKernelServer, 1))
		m, err := Parse(pcapngMAD(t, udaddyKernelServer, 2))
		require.NoError(t, err)
		require.Equal(t, CMHeader(AttrSIDRREP, req.Header().TID()), m.Header().Fields())
		r := SIDRREP(m.Data())
		f := r.Fields()
		assert.Equal(t, SIDRREQ(req.Data()).RequestID(), f.RequestID)
		assert.Equal(t, uint32(0x935bd0c8), f.RequestID)
		assert.Equal(t, SIDRSuccess, f.Status)
		assert.Equal(t, uint32(0x11), f.QPN)
		assert.Equal(t, udaddySID, f.ServiceID)
		assert.Equal(t, uint32(UDPQKey), f.QKey)
		assert.Empty(t, f.Info)
		assert.Equal(t, make([]byte, SIDRREPPrivateDataSize), f.PrivateData)
		out := New(AttrSIDRREP, req.Header().TID())
		require.NoError(t, SIDRREP(out.Data()).Encode(&f))
		require.Equal(t, []byte(m), []byte(out))
	})
}
