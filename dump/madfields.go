package dump

import (
	"net/netip"

	"github.com/gorxe/gorxe/cm/mad"
)

// MADField is one decoded field of a management datagram on QP1, under the
// name Wireshark's InfiniBand dissector gives it, so that `gorxe dump -json`
// can be compared with `tshark -T fields -e NAME` field by field.
type MADField struct {
	Name  string     // display-filter name: "infiniband.cm.req.localqpn"
	Title string     // the field's name in IBTA (or librdmacm for the RDMA-CM header)
	Value uint64     // the value; zero for an address field
	Addr  netip.Addr // the value of an address field, else the zero Addr
	Bits  uint8      // the field's width, for printing it in hex
}

// IsAddr reports whether f holds an address rather than a number.
func (f MADField) IsAddr() bool { return f.Addr.IsValid() }

// MAD decodes the MAD a packet to QP1 carries: the common header for any
// MAD, then, for a connection manager message cm/mad can parse, its name
// ("REQ") and main fields in wire order. A packet to another QP, or one too
// short for a MAD, gives nil. Wireshark 4.0 names REQ, REP, RTU, REJ, DREQ
// and DREP fields (with its own irregular names kept: a REQ's local
// communication ID is "infiniband.cm.req", a DREQ's remote QPN
// "infiniband.cm.req.remoteqpneecn", a DREP is "drsp"); it has no names for
// MRA, SIDR_REQ, SIDR_REP, LAP and APR, whose fields take names in the same
// style.
func (p *Packet) MAD() (msg string, fields []MADField) {
	if p.BTH.DestQP != gsiQP || len(p.Payload) < mad.Size {
		return "", nil
	}
	h := mad.Header(p.Payload[:mad.HeaderSize])
	var b madFields
	b.num("infiniband.mad.baseversion", "BaseVersion", uint64(h.BaseVersion()), 8)
	b.num("infiniband.mad.mgmtclass", "MgmtClass", uint64(h.Class()), 8)
	b.num("infiniband.mad.classversion", "ClassVersion", uint64(h.ClassVersion()), 8)
	b.num("infiniband.mad.method", "Method", uint64(h.Method()), 8)
	b.num("infiniband.mad.status", "Status", uint64(h.Status()), 16)
	b.num("infiniband.mad.classspecific", "ClassSpecific", uint64(h.ClassSpecific()), 16)
	b.num("infiniband.mad.transactionid", "TransactionID", h.TID(), 64)
	b.num("infiniband.mad.attributeid", "AttributeID", uint64(h.AttrID()), 16)
	b.num("infiniband.mad.attributemodifier", "AttributeModifier", uint64(h.AttrMod()), 32)
	m, err := mad.Parse(p.Payload)
	if err != nil {
		return "", b
	}
	b.cm(m)
	return h.AttrID().String(), b
}

// madFields accumulates the fields of one MAD.
type madFields []MADField

func (b *madFields) num(name, title string, v uint64, bits uint8) {
	*b = append(*b, MADField{Name: name, Title: title, Value: v, Bits: bits})
}

func (b *madFields) addr(name, title string, a netip.Addr) {
	*b = append(*b, MADField{Name: name, Title: title, Addr: a})
}

func flagBit(v bool) uint64 { return uint64(bit(v)) }

// ids adds the two communication IDs that begin most CM messages.
func (b *madFields) ids(prefix string, local, remote uint32) {
	b.num(prefix+".localcommid", "Local Communication ID", uint64(local), 32)
	b.num(prefix+".remotecommid", "Remote Communication ID", uint64(remote), 32)
}

// cm adds the fields of the CM message m carries.
func (b *madFields) cm(m mad.MAD) {
	const cm = "infiniband.cm."
	switch d := m.Data(); m.Header().AttrID() {
	case mad.AttrREQ:
		r := mad.REQ(d)
		b.num(cm+"req", "Local Communication ID", uint64(r.LocalCommID()), 32)
		b.serviceID(cm+"req.serviceid", r.ServiceID())
		b.num(cm+"req.localcaguid", "Local CA GUID", r.LocalCAGUID(), 64)
		b.num(cm+"req.localqkey", "Local Q_Key", uint64(r.LocalQKey()), 32)
		b.num(cm+"req.localqpn", "Local QPN", uint64(r.LocalQPN()), 24)
		b.num(cm+"req.responderres", "Responder Resources", uint64(r.ResponderResources()), 8)
		b.num(cm+"req.initdepth", "Initiator Depth", uint64(r.InitiatorDepth()), 8)
		b.num(cm+"req.remoteresptout", "Remote CM Response Timeout", uint64(r.RemoteCMResponseTimeout()), 5)
		b.num(cm+"req.transpsvctype", "Transport Service Type", uint64(r.TransportType()), 2)
		b.num(cm+"req.e2eflowctrl", "End-to-End Flow Control", flagBit(r.EndToEndFlowControl()), 1)
		b.num(cm+"req.startpsn", "Starting PSN", uint64(r.StartingPSN()), 24)
		b.num(cm+"req.localresptout", "Local CM Response Timeout", uint64(r.LocalCMResponseTimeout()), 5)
		b.num(cm+"req.retrcount", "Retry Count", uint64(r.RetryCount()), 3)
		b.num(cm+"req.pkey", "Partition Key", uint64(r.PKey()), 16)
		b.num(cm+"req.pppmtu", "Path Packet Payload MTU", uint64(r.PathMTU()), 4)
		b.num(cm+"req.rnrretrcount", "RNR Retry Count", uint64(r.RNRRetryCount()), 3)
		b.num(cm+"req.maxcmretr", "Max CM Retries", uint64(r.MaxCMRetries()), 4)
		b.num(cm+"req.srq", "SRQ", flagBit(r.SRQ()), 1)
		b.path(cm+"req.prim_", "Primary", r.PrimaryPath())
		if rdmaCM(r.ServiceID()) {
			b.cmaHeader(cm+"req.ip_cm.", r.PrivateData())
		}
	case mad.AttrMRA:
		r := mad.MRA(d)
		b.ids(cm+"mra", r.LocalCommID(), r.RemoteCommID())
		b.num(cm+"mra.msgmraed", "Message MRAed", uint64(r.MsgMRAed()), 2)
		b.num(cm+"mra.servicetimeout", "Service Timeout", uint64(r.ServiceTimeout()), 5)
	case mad.AttrREJ:
		r := mad.REJ(d)
		b.ids(cm+"rej", r.LocalCommID(), r.RemoteCommID())
		b.num(cm+"rej.msgrej", "Message REJected", uint64(r.MsgRejected()), 2)
		b.num(cm+"rej.rejinfolen", "Reject Info Length", uint64(r.RejectedInfoLength()), 7)
		b.num(cm+"rej.reason", "Reason", uint64(r.Reason()), 16)
	case mad.AttrREP:
		r := mad.REP(d)
		b.num(cm+"rep", "Local Communication ID", uint64(r.LocalCommID()), 32)
		b.num(cm+"rep.remotecommid", "Remote Communication ID", uint64(r.RemoteCommID()), 32)
		b.num(cm+"rep.localqkey", "Local Q_Key", uint64(r.LocalQKey()), 32)
		b.num(cm+"rep.localqpn", "Local QPN", uint64(r.LocalQPN()), 24)
		b.num(cm+"rep.startpsn", "Starting PSN", uint64(r.StartingPSN()), 24)
		b.num(cm+"rep.respres", "Responder Resources", uint64(r.ResponderResources()), 8)
		b.num(cm+"rep.initdepth", "Initiator Depth", uint64(r.InitiatorDepth()), 8)
		b.num(cm+"rep.tgtackdelay", "Target ACK Delay", uint64(r.TargetAckDelay()), 5)
		b.num(cm+"rep.failoveracc", "Failover Accepted", uint64(r.FailoverAccepted()), 2)
		b.num(cm+"rep.e2eflowctrl", "End-to-End Flow Control", flagBit(r.EndToEndFlowControl()), 1)
		b.num(cm+"rep.rnrretrcount", "RNR Retry Count", uint64(r.RNRRetryCount()), 3)
		b.num(cm+"rep.srq", "SRQ", flagBit(r.SRQ()), 1)
		b.num(cm+"rep.localcaguid", "Local CA GUID", r.LocalCAGUID(), 64)
	case mad.AttrRTU:
		r := mad.RTU(d)
		b.ids(cm+"rtu", r.LocalCommID(), r.RemoteCommID())
	case mad.AttrDREQ:
		r := mad.DREQ(d)
		b.ids(cm+"dreq", r.LocalCommID(), r.RemoteCommID())
		b.num(cm+"req.remoteqpneecn", "Remote QPN/EECN", uint64(r.RemoteQPN()), 24)
	case mad.AttrDREP:
		r := mad.DREP(d)
		b.ids(cm+"drsp", r.LocalCommID(), r.RemoteCommID())
	case mad.AttrSIDRREQ:
		r := mad.SIDRREQ(d)
		b.num(cm+"sidr_req.requestid", "Request ID", uint64(r.RequestID()), 32)
		b.num(cm+"sidr_req.pkey", "Partition Key", uint64(r.PKey()), 16)
		b.serviceID(cm+"sidr_req.serviceid", r.ServiceID())
		if rdmaCM(r.ServiceID()) {
			b.cmaHeader(cm+"sidr_req.ip_cm.", r.PrivateData())
		}
	case mad.AttrSIDRREP:
		r := mad.SIDRREP(d)
		b.num(cm+"sidr_rep.requestid", "Request ID", uint64(r.RequestID()), 32)
		b.num(cm+"sidr_rep.status", "Status", uint64(r.Status()), 8)
		b.num(cm+"sidr_rep.qpn", "QPN", uint64(r.QPN()), 24)
		b.num(cm+"sidr_rep.serviceid", "ServiceID", r.ServiceID(), 64)
		b.num(cm+"sidr_rep.qkey", "Q_Key", uint64(r.QKey()), 32)
	case mad.AttrLAP:
		r := mad.LAP(d)
		b.ids(cm+"lap", r.LocalCommID(), r.RemoteCommID())
		b.num(cm+"lap.remoteqpneecn", "Remote QPN/EECN", uint64(r.RemoteQPN()), 24)
		b.num(cm+"lap.remoteresptout", "Remote CM Response Timeout", uint64(r.RemoteCMResponseTimeout()), 5)
		b.path(cm+"lap.alt_", "Alternate", r.AlternatePath())
	case mad.AttrAPR:
		r := mad.APR(d)
		b.ids(cm+"apr", r.LocalCommID(), r.RemoteCommID())
		b.num(cm+"apr.addinfolen", "Additional Info Length", uint64(r.AddInfoLength()), 8)
		b.num(cm+"apr.status", "AP Status", uint64(r.Status()), 8)
	}
}

// path adds the GIDs and the fields of one path that RoCE uses. An
// IPv4-mapped GID is shown as the IPv4 address under its "_ipv4" name, as
// Wireshark does.
func (b *madFields) path(prefix, which string, p mad.PathFields) {
	gid := func(name, title string, g [16]byte) {
		a := netip.AddrFrom16(g)
		if a.Is4In6() {
			b.addr(name+"_ipv4", title, a.Unmap())
			return
		}
		b.addr(name, title, a)
	}
	gid(prefix+"localgid", which+" Local Port GID", p.LocalGID)
	gid(prefix+"remotegid", which+" Remote Port GID", p.RemoteGID)
	b.num(prefix+"flowlabel", which+" Flow Label", uint64(p.FlowLabel), 20)
	b.num(prefix+"tfcclass", which+" Traffic Class", uint64(p.TrafficClass), 8)
	b.num(prefix+"hoplim", which+" Hop Limit", uint64(p.HopLimit), 8)
	b.num(prefix+"localacktout", which+" Local ACK Timeout", uint64(p.LocalAckTimeout), 5)
}

// rdmaCM reports whether a service ID is one RDMA-CM makes from an IP port
// space and port (0x00000000_01PPpppp), whose REQ private data starts with
// the RDMA-CM header.
func rdmaCM(sid uint64) bool { return sid>>24 == 1 }

// serviceID adds a service ID and, for an RDMA-CM one, its protocol (the
// low byte of the port space, 0x06 for TCP) and destination port, the parts
// Wireshark shows under it.
func (b *madFields) serviceID(name string, sid uint64) {
	b.num(name, "ServiceID", sid, 64)
	if rdmaCM(sid) {
		b.num(name+".protocol", "Protocol", sid>>16&0xff, 8)
		b.num(name+".dport", "Destination Port", sid&0xffff, 16)
	}
}

// cmaHeader adds the RDMA-CM header at the start of the private data of a
// REQ or SIDR_REQ, if it is one RDMA-CM sends; the destination port it
// leaves to the service ID.
func (b *madFields) cmaHeader(prefix string, pd []byte) {
	h := mad.CMAHeader(pd)
	if len(pd) < mad.CMAHeaderSize || !h.Valid() {
		return
	}
	b.num(prefix+"majv", "CMA Version", uint64(h.Version()), 8)
	b.num(prefix+"ipv", "IP Version", uint64(h.IPVersion()), 4)
	b.num(prefix+"sport", "Source Port", uint64(h.SrcPort()), 16)
	if h.IPVersion() == 4 {
		b.addr(prefix+"sip4", "Source IP", h.Src())
		b.addr(prefix+"dip4", "Destination IP", h.Dst())
		return
	}
	b.addr(prefix+"sip6", "Source IP", h.Src())
	b.addr(prefix+"dip6", "Destination IP", h.Dst())
}
