package cm

import "github.com/gorxe/gorxe/cm/mad"

// ECE is what Enhanced Connection Establishment (IBTA comment 9434; the kernel's struct
// rdma_ucm_ece, libibverbs' struct ibv_ece) carries in a REQ and in the REP that answers it: the
// sender's vendor, an IEEE OUI of 24 bits, and options whose meaning that vendor defines. The
// vendor ID travels in the message, the options in the MAD header's attribute modifier. The CM
// carries both and interprets neither; the zero value proposes nothing, which is what a peer
// without ECE sends.
type ECE struct {
	VendorID uint32 // 24 bits
	Options  uint32
}

// valid reports whether the vendor ID fits its 24-bit field.
func (e ECE) valid() bool { return e.VendorID <= mad.QPNMask }

// newECEMAD returns a new MAD of attr and tid whose header's attribute modifier holds e's
// options, as the kernel's cm_format_mad_ece_hdr writes it.
func newECEMAD(attr mad.AttrID, tid uint64, e ECE) mad.MAD {
	msg := mad.New(attr, tid)
	h := mad.CMHeader(attr, tid)
	h.AttrMod = e.Options
	msg.Header().Encode(&h)
	return msg
}
