package mad

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse feeds arbitrary datagrams to Parse and to the view of the
// message they claim to be. Decoding must never panic, and re-encoding the
// decoded values must decode to the same values (reserved bits aside, a
// message survives a decode-encode cycle).
func FuzzParse(f *testing.F) {
	for a := AttrREQ; a <= AttrAPR; a++ {
		f.Add([]byte(New(a, 0x1122334455667788))) // every message, zeroed
	}
	req := New(AttrREQ, 1)
	_ = REQ(req.Data()).Encode(&REQFields{LocalCommID: 1, ServiceID: ServiceID(PortSpaceTCP, 7174), PathMTU: MTU1024})
	f.Add([]byte(req)) // a plausible REQ
	rej := New(AttrREJ, 1)
	rej.Data()[rejInfoLength] = 0xff
	f.Add([]byte(rej)) // a REJ whose ARI length overruns its area
	f.Add([]byte{1, 7, 2, 3})

	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		d := m.Data()
		out := make([]byte, DataSize)
		switch m.Header().AttrID() {
		case AttrREQ:
			v := REQ(d).Fields()
			require.NoError(t, REQ(out).Encode(&v))
			require.Equal(t, v, REQ(out).Fields())
			_ = CMAHeader(REQ(d).PrivateData()).Fields()
		case AttrMRA:
			v := MRA(d).Fields()
			require.NoError(t, MRA(out).Encode(&v))
			require.Equal(t, v, MRA(out).Fields())
		case AttrREJ:
			v := REJ(d).Fields()
			require.NoError(t, REJ(out).Encode(&v))
			require.Equal(t, v, REJ(out).Fields())
		case AttrREP:
			v := REP(d).Fields()
			require.NoError(t, REP(out).Encode(&v))
			require.Equal(t, v, REP(out).Fields())
		case AttrRTU:
			v := RTU(d).Fields()
			require.NoError(t, RTU(out).Encode(&v))
			require.Equal(t, v, RTU(out).Fields())
		case AttrDREQ:
			v := DREQ(d).Fields()
			require.NoError(t, DREQ(out).Encode(&v))
			require.Equal(t, v, DREQ(out).Fields())
		case AttrDREP:
			v := DREP(d).Fields()
			require.NoError(t, DREP(out).Encode(&v))
			require.Equal(t, v, DREP(out).Fields())
		case AttrSIDRREQ:
			v := SIDRREQ(d).Fields()
			require.NoError(t, SIDRREQ(out).Encode(&v))
			require.Equal(t, v, SIDRREQ(out).Fields())
			_ = CMAHeader(SIDRREQ(d).PrivateData()).Fields()
		case AttrSIDRREP:
			v := SIDRREP(d).Fields()
			require.NoError(t, SIDRREP(out).Encode(&v))
			require.Equal(t, v, SIDRREP(out).Fields())
		case AttrLAP:
			v := LAP(d).Fields()
			require.NoError(t, LAP(out).Encode(&v))
			require.Equal(t, v, LAP(out).Fields())
		case AttrAPR:
			v := APR(d).Fields()
			require.NoError(t, APR(out).Encode(&v))
			require.Equal(t, v, APR(out).Fields())
		default:
			require.Failf(t, "Parse accepted an attribute this target has no case for", "attribute %v", m.Header().AttrID())
		}
	})
}
