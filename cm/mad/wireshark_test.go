package mad

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pcapMADs returns the MAD of every frame of a classic little-endian pcap of Ethernet frames,
// each IPv4 or IPv6 / UDP / BTH / DETH / MAD / ICRC, as regen.sh writes them.
func pcapMADs(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(data), 24)
	require.Equal(t, uint32(0xa1b2c3d4), binary.LittleEndian.Uint32(data), "pcap magic")
	require.Equal(t, uint32(1), binary.LittleEndian.Uint32(data[20:]), "link type Ethernet")
	var mads [][]byte
	for data = data[24:]; len(data) > 0; {
		require.GreaterOrEqual(t, len(data), 16)
		n := int(binary.LittleEndian.Uint32(data[8:]))
		require.GreaterOrEqual(t, len(data), 16+n)
		frame := data[16 : 16+n]
		data = data[16+n:]
		ip := 20
		if binary.BigEndian.Uint16(frame[12:]) == 0x86dd {
			ip = 40
		}
		off := 14 + ip + 8 + 12 + 8 // Ethernet, IP, UDP, BTH, DETH
		require.GreaterOrEqual(t, len(frame), off+Size+4, "frame %d", len(mads)+1)
		mads = append(mads, frame[off:off+Size])
	}
	return mads
}

// wiresharkFields gives, for each Wireshark field the golden CSVs hold, its value in a parsed MAD
// through this package's views: a number, an address, or nil where the field does not apply.
var wiresharkFields = map[string]func(m MAD) any{
	"infiniband.mad.baseversion":       func(m MAD) any { return uint64(m.Header().BaseVersion()) },
	"infiniband.mad.mgmtclass":         func(m MAD) any { return uint64(m.Header().Class()) },
	"infiniband.mad.classversion":      func(m MAD) any { return uint64(m.Header().ClassVersion()) },
	"infiniband.mad.method":            func(m MAD) any { return uint64(m.Header().Method()) },
	"infiniband.mad.status":            func(m MAD) any { return uint64(m.Header().Status()) },
	"infiniband.mad.classspecific":     func(m MAD) any { return uint64(m.Header().ClassSpecific()) },
	"infiniband.mad.transactionid":     func(m MAD) any { return m.Header().TID() },
	"infiniband.mad.attributeid":       func(m MAD) any { return uint64(m.Header().AttrID()) },
	"infiniband.mad.attributemodifier": func(m MAD) any { return uint64(m.Header().AttrMod()) },

	"infiniband.cm.req":                     req(func(r REQ) any { return uint64(r.LocalCommID()) }),
	"infiniband.cm.req.serviceid":           req(func(r REQ) any { return r.ServiceID() }),
	"infiniband.cm.req.serviceid.protocol":  req(func(r REQ) any { ps, _, _ := SplitServiceID(r.ServiceID()); return uint64(ps & 0xff) }),
	"infiniband.cm.req.serviceid.dport":     req(func(r REQ) any { _, port, _ := SplitServiceID(r.ServiceID()); return uint64(port) }),
	"infiniband.cm.req.localcaguid":         req(func(r REQ) any { return r.LocalCAGUID() }),
	"infiniband.cm.req.localqkey":           req(func(r REQ) any { return uint64(r.LocalQKey()) }),
	"infiniband.cm.req.localqpn":            req(func(r REQ) any { return uint64(r.LocalQPN()) }),
	"infiniband.cm.req.responderres":        req(func(r REQ) any { return uint64(r.ResponderResources()) }),
	"infiniband.cm.req.initdepth":           req(func(r REQ) any { return uint64(r.InitiatorDepth()) }),
	"infiniband.cm.req.remoteresptout":      req(func(r REQ) any { return uint64(r.RemoteCMResponseTimeout()) }),
	"infiniband.cm.req.transpsvctype":       req(func(r REQ) any { return uint64(r.TransportType()) }),
	"infiniband.cm.req.e2eflowctrl":         req(func(r REQ) any { return b2u(r.EndToEndFlowControl()) }),
	"infiniband.cm.req.startpsn":            req(func(r REQ) any { return uint64(r.StartingPSN()) }),
	"infiniband.cm.req.localresptout":       req(func(r REQ) any { return uint64(r.LocalCMResponseTimeout()) }),
	"infiniband.cm.req.retrcount":           req(func(r REQ) any { return uint64(r.RetryCount()) }),
	"infiniband.cm.req.pkey":                req(func(r REQ) any { return uint64(r.PKey()) }),
	"infiniband.cm.req.pppmtu":              req(func(r REQ) any { return uint64(r.PathMTU()) }),
	"infiniband.cm.req.rnrretrcount":        req(func(r REQ) any { return uint64(r.RNRRetryCount()) }),
	"infiniband.cm.req.maxcmretr":           req(func(r REQ) any { return uint64(r.MaxCMRetries()) }),
	"infiniband.cm.req.srq":                 req(func(r REQ) any { return b2u(r.SRQ()) }),
	"infiniband.cm.req.prim_localgid":       req(func(r REQ) any { return gid(r.PrimaryPath().LocalGID, false) }),
	"infiniband.cm.req.prim_remotegid":      req(func(r REQ) any { return gid(r.PrimaryPath().RemoteGID, false) }),
	"infiniband.cm.req.prim_localgid_ipv4":  req(func(r REQ) any { return gid(r.PrimaryPath().LocalGID, true) }),
	"infiniband.cm.req.prim_remotegid_ipv4": req(func(r REQ) any { return gid(r.PrimaryPath().RemoteGID, true) }),
	"infiniband.cm.req.prim_tfcclass":       req(func(r REQ) any { return uint64(r.PrimaryPath().TrafficClass) }),
	"infiniband.cm.req.prim_hoplim":         req(func(r REQ) any { return uint64(r.PrimaryPath().HopLimit) }),
	"infiniband.cm.req.prim_localacktout":   req(func(r REQ) any { return uint64(r.PrimaryPath().LocalAckTimeout) }),
	"infiniband.cm.req.ip_cm.majv":          cma(func(h CMAHeader) any { return uint64(h.Version()) }),
	"infiniband.cm.req.ip_cm.ipv":           cma(func(h CMAHeader) any { return uint64(h.IPVersion()) }),
	"infiniband.cm.req.ip_cm.sport":         cma(func(h CMAHeader) any { return uint64(h.SrcPort()) }),
	"infiniband.cm.req.ip_cm.sip4":          cma(func(h CMAHeader) any { return only(h.IPVersion() == 4, h.Src()) }),
	"infiniband.cm.req.ip_cm.dip4":          cma(func(h CMAHeader) any { return only(h.IPVersion() == 4, h.Dst()) }),
	"infiniband.cm.req.ip_cm.sip6":          cma(func(h CMAHeader) any { return only(h.IPVersion() == 6, h.Src()) }),
	"infiniband.cm.req.ip_cm.dip6":          cma(func(h CMAHeader) any { return only(h.IPVersion() == 6, h.Dst()) }),
	"infiniband.cm.rep":                     rep(func(r REP) any { return uint64(r.LocalCommID()) }),
	"infiniband.cm.rep.remotecommid":        rep(func(r REP) any { return uint64(r.RemoteCommID()) }),
	"infiniband.cm.rep.localqkey":           rep(func(r REP) any { return uint64(r.LocalQKey()) }),
	"infiniband.cm.rep.localqpn":            rep(func(r REP) any { return uint64(r.LocalQPN()) }),
	"infiniband.cm.rep.startpsn":            rep(func(r REP) any { return uint64(r.StartingPSN()) }),
	"infiniband.cm.rep.respres":             rep(func(r REP) any { return uint64(r.ResponderResources()) }),
	"infiniband.cm.rep.initdepth":           rep(func(r REP) any { return uint64(r.InitiatorDepth()) }),
	"infiniband.cm.rep.tgtackdelay":         rep(func(r REP) any { return uint64(r.TargetAckDelay()) }),
	"infiniband.cm.rep.failoveracc":         rep(func(r REP) any { return uint64(r.FailoverAccepted()) }),
	"infiniband.cm.rep.e2eflowctrl":         rep(func(r REP) any { return b2u(r.EndToEndFlowControl()) }),
	"infiniband.cm.rep.rnrretrcount":        rep(func(r REP) any { return uint64(r.RNRRetryCount()) }),
	"infiniband.cm.rep.srq":                 rep(func(r REP) any { return b2u(r.SRQ()) }),
	"infiniband.cm.rep.localcaguid":         rep(func(r REP) any { return r.LocalCAGUID() }),
	"infiniband.cm.rtu.localcommid":         msg(AttrRTU, func(d []byte) any { return uint64(RTU(d).LocalCommID()) }),
	"infiniband.cm.rtu.remotecommid":        msg(AttrRTU, func(d []byte) any { return uint64(RTU(d).RemoteCommID()) }),
	"infiniband.cm.rej.localcommid":         msg(AttrREJ, func(d []byte) any { return uint64(REJ(d).LocalCommID()) }),
	"infiniband.cm.rej.remotecommid":        msg(AttrREJ, func(d []byte) any { return uint64(REJ(d).RemoteCommID()) }),
	"infiniband.cm.rej.msgrej":              msg(AttrREJ, func(d []byte) any { return uint64(REJ(d).MsgRejected()) }),
	"infiniband.cm.rej.rejinfolen":          msg(AttrREJ, func(d []byte) any { return uint64(REJ(d).RejectedInfoLength()) }),
	"infiniband.cm.rej.reason":              msg(AttrREJ, func(d []byte) any { return uint64(REJ(d).Reason()) }),
	"infiniband.cm.dreq.localcommid":        msg(AttrDREQ, func(d []byte) any { return uint64(DREQ(d).LocalCommID()) }),
	"infiniband.cm.dreq.remotecommid":       msg(AttrDREQ, func(d []byte) any { return uint64(DREQ(d).RemoteCommID()) }),
	"infiniband.cm.req.remoteqpneecn":       msg(AttrDREQ, func(d []byte) any { return uint64(DREQ(d).RemoteQPN()) }),
	"infiniband.cm.drsp.localcommid":        msg(AttrDREP, func(d []byte) any { return uint64(DREP(d).LocalCommID()) }),
	"infiniband.cm.drsp.remotecommid":       msg(AttrDREP, func(d []byte) any { return uint64(DREP(d).RemoteCommID()) }),
}

// msg applies f to the message data of a MAD carrying message a, and gives nil for any other.
func msg(a AttrID, f func(d []byte) any) func(MAD) any {
	return func(m MAD) any {
		if m.Header().AttrID() != a {
			return nil
		}
		return f(m.Data())
	}
}

func req(f func(REQ) any) func(MAD) any {
	return msg(AttrREQ, func(d []byte) any { return f(REQ(d)) })
}

func rep(f func(REP) any) func(MAD) any {
	return msg(AttrREP, func(d []byte) any { return f(REP(d)) })
}

// cma applies f to the RDMA-CM header of a REQ to an RDMA-CM service ID.
func cma(f func(CMAHeader) any) func(MAD) any {
	return req(func(r REQ) any {
		if ps, _, ok := SplitServiceID(r.ServiceID()); !ok || ps == 0 || !CMAHeader(r.PrivateData()).Valid() {
			return nil
		}
		return f(CMAHeader(r.PrivateData()))
	})
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// gid gives a GID as Wireshark shows it under one of its two names: an IPv4-mapped GID as IPv4
// under the _ipv4 name, any other as IPv6 under the plain one.
func gid(g [16]byte, ipv4 bool) any {
	a := netip.AddrFrom16(g)
	if a.Is4In6() != ipv4 {
		return nil
	}
	return a.Unmap()
}

func only(ok bool, a netip.Addr) any {
	if !ok {
		return nil
	}
	return a
}

// TestMatchesWireshark parses every MAD of the golden CM captures and checks each field
// Wireshark decoded against this package's views: the same value, and present exactly where
// Wireshark shows one.
func TestMatchesWireshark(t *testing.T) {
	files, err := filepath.Glob("testdata/*.pcap")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, pcap := range files {
		t.Run(filepath.Base(pcap), func(t *testing.T) {
			mads := pcapMADs(t, pcap)
			raw, err := os.ReadFile(strings.TrimSuffix(pcap, ".pcap") + ".tshark.csv")
			require.NoError(t, err)
			rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
			require.NoError(t, err)
			header, rows := rows[0], rows[1:]
			require.Len(t, rows, len(mads))
			for i, row := range rows {
				m, err := Parse(mads[i])
				require.NoError(t, err, "frame %d", i+1)
				for j, name := range header {
					if !strings.HasPrefix(name, "infiniband.mad.") && !strings.HasPrefix(name, "infiniband.cm.") {
						continue
					}
					get, ok := wiresharkFields[name]
					require.True(t, ok, "no view for Wireshark field %s", name)
					got := get(m)
					switch cell := row[j]; {
					case cell == "":
						assert.Nil(t, got, "frame %d: %s, Wireshark shows none", i+1, name)
					case got == nil:
						assert.Fail(t, "missing field", "frame %d: %s is none, Wireshark %s", i+1, name, cell)
					default:
						if a, isAddr := got.(netip.Addr); isAddr {
							assert.Equal(t, cell, a.String(), "frame %d: %s", i+1, name)
							continue
						}
						want, err := strconv.ParseUint(cell, 0, 64)
						require.NoError(t, err, "frame %d: %s", i+1, name)
						assert.Equal(t, want, got, "frame %d: %s", i+1, name)
					}
				}
			}
		})
	}
}
