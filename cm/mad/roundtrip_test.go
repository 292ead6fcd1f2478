package mad

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// randPath returns a path with every field at a random in-range value.
func randPath(r *rand.Rand) PathFields {
	var p PathFields
	p.LocalLID, p.RemoteLID = uint16(r.Uint32()), uint16(r.Uint32())
	for i := range p.LocalGID {
		p.LocalGID[i], p.RemoteGID[i] = byte(r.Uint32()), byte(r.Uint32())
	}
	p.FlowLabel = r.Uint32() & 0xfffff
	p.PacketRate = uint8(r.Uint32()) & 0x3f
	p.TrafficClass, p.HopLimit = uint8(r.Uint32()), uint8(r.Uint32())
	p.SL = uint8(r.Uint32()) & 0xf
	p.SubnetLocal = r.Uint32()&1 == 1
	p.LocalAckTimeout = uint8(r.Uint32()) & 0x1f
	return p
}

func randBytes(r *rand.Rand, max int) []byte {
	b := make([]byte, r.IntN(max+1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// padded returns b extended with zeros to n bytes: what a decoder returns for
// private data the encoder was given short.
func padded(b []byte, n int) []byte { return append(append([]byte{}, b...), make([]byte, n-len(b))...) }

// TestRoundTrip encodes random in-range values for every message and
// requires that decoding gives them back.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	u8 := func(mask uint8) uint8 { return uint8(r.Uint32()) & mask }
	b := func() bool { return r.Uint32()&1 == 1 }
	for i := 0; i < 200; i++ {
		d := make([]byte, DataSize)

		req := REQFields{LocalCommID: r.Uint32(), VendorID: r.Uint32() & 0xffffff, ServiceID: r.Uint64(), LocalCAGUID: r.Uint64(), LocalQKey: r.Uint32(),
			LocalQPN: r.Uint32() & QPNMask, ResponderResources: u8(0xff), LocalEECN: r.Uint32() & QPNMask,
			InitiatorDepth: u8(0xff), RemoteEECN: r.Uint32() & QPNMask, RemoteCMResponseTimeout: u8(0x1f),
			TransportType: TransportType(u8(3)), EndToEndFlowControl: b(), StartingPSN: r.Uint32() & QPNMask,
			LocalCMResponseTimeout: u8(0x1f), RetryCount: u8(7), PKey: uint16(r.Uint32()), PathMTU: MTU(u8(0xf)),
			RDCExists: b(), RNRRetryCount: u8(7), MaxCMRetries: u8(0xf), SRQ: b(), ExtendedTransportType: u8(7),
			PrimaryPath: randPath(r), AlternatePath: randPath(r), SAPSupported: b(),
			PrivateData: randBytes(r, REQPrivateDataSize)}
		require.NoError(t, REQ(d).Encode(&req))
		req.PrivateData = padded(req.PrivateData, REQPrivateDataSize)
		require.Equal(t, req, REQ(d).Fields())

		rep := REPFields{LocalCommID: r.Uint32(), RemoteCommID: r.Uint32(), LocalQKey: r.Uint32(),
			LocalQPN: r.Uint32() & QPNMask, LocalEECN: r.Uint32() & QPNMask, StartingPSN: r.Uint32() & QPNMask,
			VendorID: r.Uint32() & 0xffffff, ResponderResources: u8(0xff), InitiatorDepth: u8(0xff), TargetAckDelay: u8(0x1f), FailoverAccepted: u8(3),
			EndToEndFlowControl: b(), RNRRetryCount: u8(7), SRQ: b(), LocalCAGUID: r.Uint64(),
			PrivateData: randBytes(r, REPPrivateDataSize)}
		require.NoError(t, REP(d).Encode(&rep))
		rep.PrivateData = padded(rep.PrivateData, REPPrivateDataSize)
		require.Equal(t, rep, REP(d).Fields())

		rtu := RTUFields{LocalCommID: r.Uint32(), RemoteCommID: r.Uint32(), PrivateData: randBytes(r, RTUPrivateDataSize)}
		require.NoError(t, RTU(d).Encode(&rtu))
		rtu.PrivateData = padded(rtu.PrivateData, RTUPrivateDataSize)
		require.Equal(t, rtu, RTU(d).Fields())

		mra := MRAFields{LocalCommID: r.Uint32(), RemoteCommID: r.Uint32(), MsgMRAed: MsgType(u8(3)),
			ServiceTimeout: u8(0x1f), PrivateData: randBytes(r, MRAPrivateDataSize)}
		require.NoError(t, MRA(d).Encode(&mra))
		mra.PrivateData = padded(mra.PrivateData, MRAPrivateDataSize)
		require.Equal(t, mra, MRA(d).Fields())

		rej := REJFields{LocalCommID: r.Uint32(), RemoteCommID: r.Uint32(), MsgRejected: MsgType(u8(3)),
			Reason: RejectReason(r.Uint32()), ARI: randBytes(r, REJARISize), PrivateData: randBytes(r, REJPrivateDataSize)}
		require.NoError(t, REJ(d).Encode(&rej))
		rej.PrivateData = padded(rej.PrivateData, REJPrivateDataSize)
		require.Equal(t, rej, REJ(d).Fields())

		dreq := DREQFields{LocalCommID: r.Uint32(), RemoteCommID: r.Uint32(), RemoteQPN: r.Uint32() & QPNMask,
			PrivateData: randBytes(r, DREQPrivateDataSize)}
		require.NoError(t, DREQ(d).Encode(&dreq))
		dreq.PrivateData = padded(dreq.PrivateData, DREQPrivateDataSize)
		require.Equal(t, dreq, DREQ(d).Fields())

		drep := DREPFields{LocalCommID: r.Uint32(), RemoteCommID: r.Uint32(), PrivateData: randBytes(r, DREPPrivateDataSize)}
		require.NoError(t, DREP(d).Encode(&drep))
		drep.PrivateData = padded(drep.PrivateData, DREPPrivateDataSize)
		require.Equal(t, drep, DREP(d).Fields())

		lap := LAPFields{LocalCommID: r.Uint32(), RemoteCommID: r.Uint32(), RemoteQPN: r.Uint32() & QPNMask,
			RemoteCMResponseTimeout: u8(0x1f), AlternatePath: randPath(r), PrivateData: randBytes(r, LAPPrivateDataSize)}
		require.NoError(t, LAP(d).Encode(&lap))
		lap.PrivateData = padded(lap.PrivateData, LAPPrivateDataSize)
		require.Equal(t, lap, LAP(d).Fields())

		apr := APRFields{LocalCommID: r.Uint32(), RemoteCommID: r.Uint32(), Status: APRStatus(u8(0xff)),
			Info: randBytes(r, APRInfoSize), PrivateData: randBytes(r, APRPrivateDataSize)}
		require.NoError(t, APR(d).Encode(&apr))
		apr.PrivateData = padded(apr.PrivateData, APRPrivateDataSize)
		require.Equal(t, apr, APR(d).Fields())

		sreq := SIDRREQFields{RequestID: r.Uint32(), PKey: uint16(r.Uint32()), ServiceID: r.Uint64(),
			PrivateData: randBytes(r, SIDRREQPrivateDataSize)}
		require.NoError(t, SIDRREQ(d).Encode(&sreq))
		sreq.PrivateData = padded(sreq.PrivateData, SIDRREQPrivateDataSize)
		require.Equal(t, sreq, SIDRREQ(d).Fields())

		srep := SIDRREPFields{RequestID: r.Uint32(), Status: SIDRStatus(u8(0xff)), QPN: r.Uint32() & QPNMask,
			ServiceID: r.Uint64(), QKey: r.Uint32(), Info: randBytes(r, SIDRREPInfoSize),
			PrivateData: randBytes(r, SIDRREPPrivateDataSize)}
		require.NoError(t, SIDRREP(d).Encode(&srep))
		srep.PrivateData = padded(srep.PrivateData, SIDRREPPrivateDataSize)
		require.Equal(t, srep, SIDRREP(d).Fields())
	}
}

// TestPrivateDataLimits checks that every message takes exactly its area
// and refuses one byte more without touching the buffer.
func TestPrivateDataLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		size   int
		encode func(d, p []byte) error
	}{
		{"REQ", REQPrivateDataSize, func(d, p []byte) error { return REQ(d).Encode(&REQFields{PrivateData: p}) }},
		{"REP", REPPrivateDataSize, func(d, p []byte) error { return REP(d).Encode(&REPFields{PrivateData: p}) }},
		{"RTU", RTUPrivateDataSize, func(d, p []byte) error { return RTU(d).Encode(&RTUFields{PrivateData: p}) }},
		{"MRA", MRAPrivateDataSize, func(d, p []byte) error { return MRA(d).Encode(&MRAFields{PrivateData: p}) }},
		{"REJ", REJPrivateDataSize, func(d, p []byte) error { return REJ(d).Encode(&REJFields{PrivateData: p}) }},
		{"REJ ARI", REJARISize, func(d, p []byte) error { return REJ(d).Encode(&REJFields{ARI: p}) }},
		{"DREQ", DREQPrivateDataSize, func(d, p []byte) error { return DREQ(d).Encode(&DREQFields{PrivateData: p}) }},
		{"DREP", DREPPrivateDataSize, func(d, p []byte) error { return DREP(d).Encode(&DREPFields{PrivateData: p}) }},
		{"LAP", LAPPrivateDataSize, func(d, p []byte) error { return LAP(d).Encode(&LAPFields{PrivateData: p}) }},
		{"APR", APRPrivateDataSize, func(d, p []byte) error { return APR(d).Encode(&APRFields{PrivateData: p}) }},
		{"APR info", APRInfoSize, func(d, p []byte) error { return APR(d).Encode(&APRFields{Info: p}) }},
		{"SIDR_REQ", SIDRREQPrivateDataSize, func(d, p []byte) error { return SIDRREQ(d).Encode(&SIDRREQFields{PrivateData: p}) }},
		{"SIDR_REP", SIDRREPPrivateDataSize, func(d, p []byte) error { return SIDRREP(d).Encode(&SIDRREPFields{PrivateData: p}) }},
		{"SIDR_REP info", SIDRREPInfoSize, func(d, p []byte) error { return SIDRREP(d).Encode(&SIDRREPFields{Info: p}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := make([]byte, DataSize)
			full := make([]byte, tc.size)
			for i := range full {
				full[i] = 0x5a
			}
			require.NoError(t, tc.encode(d, full))
			require.Equal(t, tc.size, countByte(d, 0x5a), "the area holds exactly its size")
			before := append([]byte{}, d...)
			require.ErrorIs(t, tc.encode(d, append(full, 0x5a)), ErrPrivateDataTooLong)
			require.Equal(t, before, d, "a refused encode writes nothing")
		})
	}
}

func countByte(b []byte, v byte) int {
	n := 0
	for _, x := range b {
		if x == v {
			n++
		}
	}
	return n
}

// TestHostileLengths checks that length fields beyond their areas are
// clamped rather than read past.
func TestHostileLengths(t *testing.T) {
	d := make([]byte, DataSize)
	d[rejInfoLength] = 0xff
	require.Equal(t, uint8(127), REJ(d).RejectedInfoLength())
	require.Len(t, REJ(d).ARI(), REJARISize)
	d = make([]byte, DataSize)
	d[aprInfoLength] = 0xff
	require.Len(t, APR(d).Info(), APRInfoSize)
	d = make([]byte, DataSize)
	d[sidrRepInfoLength] = 0xff
	require.Len(t, SIDRREP(d).Info(), SIDRREPInfoSize)
}

func TestParseErrors(t *testing.T) {
	good := New(AttrRTU, 1)
	for i := range Size {
		_, err := Parse(good[:i])
		require.ErrorIs(t, err, ErrTruncated, "length %d", i)
	}
	m, err := Parse(append(append([]byte{}, good...), 1, 2, 3))
	require.NoError(t, err)
	require.Len(t, m, Size, "trailing bytes are cut off")

	for _, tc := range []struct {
		name string
		off  int
		val  byte
		err  error
	}{
		{"base version 2", hdrBaseVersion, 2, ErrBaseVersion},
		{"subnet administration class", hdrClass, 0x03, ErrClass},
		{"class version 1", hdrClassVersion, 1, ErrClassVersion},
		{"Get method", hdrMethod, 0x01, ErrMethod},
		{"response bit", hdrMethod, 0x83, ErrMethod},
		{"attribute 0x0f", hdrAttrID + 1, 0x0f, ErrUnknownAttribute},
		{"attribute 0x1b", hdrAttrID + 1, 0x1b, ErrUnknownAttribute},
		{"attribute 0x0110", hdrAttrID, 0x01, ErrUnknownAttribute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := append([]byte{}, good...)
			b[tc.off] = tc.val
			_, err := Parse(b)
			require.ErrorIs(t, err, tc.err)
		})
	}
	var names []string
	for a := AttrREQ; a <= AttrAPR; a++ {
		_, err := Parse(New(a, 0))
		require.NoError(t, err, "%v", a)
		names = append(names, a.String())
	}
	require.Equal(t, []string{"REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP", "LAP", "APR"}, names)
	require.Equal(t, "AttrID(0x1b)", AttrID(0x1b).String())
	require.Equal(t, "AttrID(0xf)", AttrID(0x0f).String())
	require.Equal(t, "AttrID(0x0)", AttrID(0).String())
	require.Equal(t, "invalid service ID", RejInvalidServiceID.String())
	require.Equal(t, "reject reason 34", RejectReason(34).String())
}
