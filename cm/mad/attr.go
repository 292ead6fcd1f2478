package mad

import "strconv"

// AttrID is the attribute ID of a CM MAD, which names the message it carries
// (IBTA Table 104; CM_*_ATTR_ID in include/rdma/ib_cm.h).
type AttrID uint16

// CM message attribute IDs.
const (
	AttrREQ     AttrID = 0x0010 // ConnectRequest
	AttrMRA     AttrID = 0x0011 // MsgRcptAck
	AttrREJ     AttrID = 0x0012 // ConnectReject
	AttrREP     AttrID = 0x0013 // ConnectReply
	AttrRTU     AttrID = 0x0014 // ReadyToUse
	AttrDREQ    AttrID = 0x0015 // DisconnectRequest
	AttrDREP    AttrID = 0x0016 // DisconnectReply
	AttrSIDRREQ AttrID = 0x0017 // ServiceIDResReq
	AttrSIDRREP AttrID = 0x0018 // ServiceIDResReqResp
	AttrLAP     AttrID = 0x0019 // LoadAlternatePath
	AttrAPR     AttrID = 0x001A // AlternatePathResponse
)

// attrNames is indexed by the attribute ID itself; the IDs below AttrREQ have no name.
var attrNames = [...]string{
	AttrREQ:     "REQ",
	AttrMRA:     "MRA",
	AttrREJ:     "REJ",
	AttrREP:     "REP",
	AttrRTU:     "RTU",
	AttrDREQ:    "DREQ",
	AttrDREP:    "DREP",
	AttrSIDRREQ: "SIDR_REQ",
	AttrSIDRREP: "SIDR_REP",
	AttrLAP:     "LAP",
	AttrAPR:     "APR",
}

// Known reports whether a is one of the CM message attribute IDs.
func (a AttrID) Known() bool { return a >= AttrREQ && a <= AttrAPR }

// String returns the message name as the spec abbreviates it ("REQ", "SIDR_REQ").
func (a AttrID) String() string {
	if a.Known() {
		return attrNames[a]
	}
	return "AttrID(0x" + strconv.FormatUint(uint64(a), 16) + ")"
}
