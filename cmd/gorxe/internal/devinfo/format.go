package devinfo

import (
	"bufio"
	"fmt"
	"io"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/cmd/gorxe/internal/gidtext"
)

// Device is what Print reads from a device; *gorxe.Device provides it.
type Device interface {
	Name() string
	Query() (gorxe.DeviceAttr, error)
	QueryPort(port uint8) (gorxe.PortAttr, error)
	GIDTable() []gorxe.GIDEntry
}

// transportIB is the transport type rxe reports, and so gorxe (IBV_TRANSPORT_IB).
const transportIB = 0

// numCompVectors: gorxe CQs take no completion vector, so there is one.
const numCompVectors = 1

// Print writes the device's attributes as ibv_devinfo does: port 0 means every port, verbose adds
// all device and port attributes, the GID table and, in place of the counters, where to find them
// (countersNote).
func Print(w io.Writer, d Device, port int, verbose bool) error {
	attr, err := d.Query()
	if err != nil {
		return fmt.Errorf("Failed to query device props: %w", err)
	}
	if port > int(attr.PhysPortCnt) {
		return fmt.Errorf("Invalid port requested for device")
	}
	b := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }
	p("hca_id:\t%s", d.Name())
	p("\ttransport:\t\t\t%s (%d)", "InfiniBand", transportIB)
	if attr.FwVer != "" {
		p("\tfw_ver:\t\t\t\t%s", attr.FwVer)
	}
	p("\tnode_guid:\t\t\t%s", guid(attr.NodeGUID))
	p("\tsys_image_guid:\t\t\t%s", guid(attr.SysImageGUID))
	p("\tvendor_id:\t\t\t0x%04x", attr.VendorID)
	p("\tvendor_part_id:\t\t\t%d", attr.VendorPartID)
	p("\thw_ver:\t\t\t\t0x%X", attr.HwVer)
	p("\tphys_port_cnt:\t\t\t%d", attr.PhysPortCnt)
	if verbose {
		printDeviceAttr(p, &attr)
	}
	for pn := 1; pn <= int(attr.PhysPortCnt); pn++ {
		if port != 0 && pn != port {
			continue
		}
		pa, err := d.QueryPort(uint8(pn))
		if err != nil {
			b.Flush()
			return fmt.Errorf("Failed to query port %d props: %w", pn, err)
		}
		p("\t\tport:\t%d", pn)
		p("\t\t\tstate:\t\t\t%s (%d)", portState(pa.State), pa.State)
		p("\t\t\tmax_mtu:\t\t%s (%d)", mtu(pa.MaxMTU), pa.MaxMTU)
		p("\t\t\tactive_mtu:\t\t%s (%d)", mtu(pa.ActiveMTU), pa.ActiveMTU)
		p("\t\t\tsm_lid:\t\t\t%d", pa.SMLID)
		p("\t\t\tport_lid:\t\t%d", pa.LID)
		p("\t\t\tport_lmc:\t\t0x%02x", pa.LMC)
		p("\t\t\tlink_layer:\t\t%s", linkLayer(pa.LinkLayer))
		if verbose {
			printPortAttr(p, &pa)
			for _, e := range d.GIDTable() {
				if e.PortNum == uint8(pn) && [8]byte(e.GID[8:]) != [8]byte{} {
					p("\t\t\tGID[%3d]:\t\t%s, %s", e.Index, gidtext.Format(e.GID), e.Type)
				}
			}
			p("%s", countersNote)
		}
		p("")
	}
	return b.Flush()
}

// countersNote stands where -v would list the port's counters. A gorxe device lives in the
// process that opens it, and the one devinfo opens to show has carried no traffic: its counters
// would all read 0 whatever the tools running beside it do. The note says where their counters
// are instead.
const countersNote = "\t\t\tcounters:\t\tnot in this process: a gorxe device counts in the process that uses it; " +
	"start that tool with --counters (printed when it ends) or --metrics ADDR (then gorxe stats ADDR)"

func printDeviceAttr(p func(string, ...any), a *gorxe.DeviceAttr) {
	p("\tmax_mr_size:\t\t\t0x%x", a.MaxMRSize)
	p("\tpage_size_cap:\t\t\t0x%x", a.PageSizeCap)
	p("\tmax_qp:\t\t\t\t%d", a.MaxQP)
	p("\tmax_qp_wr:\t\t\t%d", a.MaxQPWR)
	p("\tdevice_cap_flags:\t\t0x%08x", uint32(a.DeviceCapFlags))
	printFlags(p, uint64(uint32(a.DeviceCapFlags)), deviceCapNames)
	p("\tmax_sge:\t\t\t%d", a.MaxSGE)
	p("\tmax_sge_rd:\t\t\t%d", a.MaxSGERd)
	p("\tmax_cq:\t\t\t\t%d", a.MaxCQ)
	p("\tmax_cqe:\t\t\t%d", a.MaxCQE)
	p("\tmax_mr:\t\t\t\t%d", a.MaxMR)
	p("\tmax_pd:\t\t\t\t%d", a.MaxPD)
	p("\tmax_qp_rd_atom:\t\t\t%d", a.MaxQPRdAtom)
	p("\tmax_ee_rd_atom:\t\t\t%d", a.MaxEERdAtom)
	p("\tmax_res_rd_atom:\t\t%d", a.MaxResRdAtom)
	p("\tmax_qp_init_rd_atom:\t\t%d", a.MaxQPInitRdAtom)
	p("\tmax_ee_init_rd_atom:\t\t%d", a.MaxEEInitRdAtom)
	p("\tatomic_cap:\t\t\t%s (%d)", atomicCap(a.AtomicCap), a.AtomicCap)
	p("\tmax_ee:\t\t\t\t%d", a.MaxEE)
	p("\tmax_rdd:\t\t\t%d", a.MaxRDD)
	p("\tmax_mw:\t\t\t\t%d", a.MaxMW)
	p("\tmax_raw_ipv6_qp:\t\t%d", a.MaxRawIPv6QP)
	p("\tmax_raw_ethy_qp:\t\t%d", a.MaxRawEthyQP)
	p("\tmax_mcast_grp:\t\t\t%d", a.MaxMcastGrp)
	p("\tmax_mcast_qp_attach:\t\t%d", a.MaxMcastQPAttach)
	p("\tmax_total_mcast_qp_attach:\t%d", a.MaxTotalMcastQPAttach)
	p("\tmax_ah:\t\t\t\t%d", a.MaxAH)
	p("\tmax_fmr:\t\t\t%d", a.MaxFMR)
	if a.MaxFMR != 0 {
		p("\tmax_map_per_fmr:\t\t%d", a.MaxMapPerFMR)
	}
	p("\tmax_srq:\t\t\t%d", a.MaxSRQ)
	if a.MaxSRQ != 0 {
		p("\tmax_srq_wr:\t\t\t%d", a.MaxSRQWR)
		p("\tmax_srq_sge:\t\t\t%d", a.MaxSRQSGE)
	}
	p("\tmax_pkeys:\t\t\t%d", a.MaxPKeys)
	p("\tlocal_ca_ack_delay:\t\t%d", a.LocalCAAckDelay)
	// gorxe has no on-demand paging capabilities to report, nor timestamps, TSO, RSS, pacing or
	// tag matching: the extended attributes are all zero, as they print for rxe.
	p("\tgeneral_odp_caps:")
	for _, t := range []string{"rc", "uc", "ud", "xrc"} {
		p("\t%s_odp_caps:", t)
		p("\t\t\t\t\tNO SUPPORT")
	}
	p("\tcompletion_timestamp_mask not supported")
	p("\tcore clock not supported")
	p("\tdevice_cap_flags_ex:\t\t0x%X", uint64(a.DeviceCapFlags))
	printFlags(p, uint64(a.DeviceCapFlags)&^0xffffffff, deviceCapExNames)
	p("\ttso_caps:")
	p("\t\tmax_tso:\t\t\t0")
	p("\trss_caps:")
	p("\t\tmax_rwq_indirection_tables:\t\t\t0")
	p("\t\tmax_rwq_indirection_table_size:\t\t\t0")
	p("\t\trx_hash_function:\t\t\t\t0x0")
	p("\t\trx_hash_fields_mask:\t\t\t\t0x0")
	p("\tmax_wq_type_rq:\t\t\t0")
	p("\tpacket_pacing_caps:")
	p("\t\tqp_rate_limit_min:\t0kbps")
	p("\t\tqp_rate_limit_max:\t0kbps")
	p("\ttag matching not supported")
	p("\tnum_comp_vectors:\t\t%d", numCompVectors)
}

func printPortAttr(p func(string, ...any), a *gorxe.PortAttr) {
	p("\t\t\tmax_msg_sz:\t\t0x%x", a.MaxMsgSz)
	p("\t\t\tport_cap_flags:\t\t0x%08x", uint32(a.PortCapFlags))
	p("\t\t\tport_cap_flags2:\t0x%04x", 0)
	p("\t\t\tmax_vl_num:\t\t%s (%d)", vlNum(a.MaxVLNum), a.MaxVLNum)
	p("\t\t\tbad_pkey_cntr:\t\t0x%x", a.BadPKeyCntr)
	p("\t\t\tqkey_viol_cntr:\t\t0x%x", a.QKeyViolCntr)
	p("\t\t\tsm_sl:\t\t\t%d", a.SMSL)
	p("\t\t\tpkey_tbl_len:\t\t%d", a.PKeyTblLen)
	p("\t\t\tgid_tbl_len:\t\t%d", a.GIDTblLen)
	p("\t\t\tsubnet_timeout:\t\t%d", a.SubnetTimeout)
	p("\t\t\tinit_type_reply:\t%d", a.InitTypeReply)
	p("\t\t\tactive_width:\t\t%sX (%d)", width(a.ActiveWidth), a.ActiveWidth)
	p("\t\t\tactive_speed:\t\t%s (%d)", speed(a.ActiveSpeed), a.ActiveSpeed)
	p("\t\t\tphys_state:\t\t%s (%d)", physState(a.PhysState), a.PhysState)
}

// flagName names one capability bit.
type flagName struct {
	bit  uint64
	name string
}

var deviceCapNames = []flagName{
	{1 << 0, "RESIZE_MAX_WR"}, {1 << 1, "BAD_PKEY_CNTR"}, {1 << 2, "BAD_QKEY_CNTR"}, {1 << 3, "RAW_MULTI"},
	{1 << 4, "AUTO_PATH_MIG"}, {1 << 5, "CHANGE_PHY_PORT"}, {1 << 6, "UD_AV_PORT_ENFORCE"},
	{1 << 7, "CURR_QP_STATE_MOD"}, {1 << 8, "SHUTDOWN_PORT"}, {1 << 9, "INIT_TYPE"},
	{1 << 10, "PORT_ACTIVE_EVENT"}, {1 << 11, "SYS_IMAGE_GUID"}, {1 << 12, "RC_RNR_NAK_GEN"},
	{1 << 13, "SRQ_RESIZE"}, {1 << 14, "N_NOTIFY_CQ"}, {1 << 17, "MEM_WINDOW"}, {1 << 18, "UD_IP_CSUM"},
	{1 << 20, "XRC"}, {1 << 21, "MEM_MGT_EXTENSIONS"}, {1 << 23, "MEM_WINDOW_TYPE_2A"},
	{1 << 24, "MEM_WINDOW_TYPE_2B"}, {1 << 25, "RC_IP_CSUM"}, {1 << 26, "RAW_IP_CSUM"},
	{1 << 29, "MANAGED_FLOW_STEERING"},
}

var deviceCapExNames = []flagName{{1 << 34, "RAW_SCATTER_FCS"}, {1 << 36, "PCI_WRITE_END_PADDING"}}

// printFlags prints the name of every set bit, then the bits it has no name for.
func printFlags(p func(string, ...any), v uint64, names []flagName) {
	for _, n := range names {
		if v&n.bit != 0 {
			p("\t\t\t\t\t%s", n.name)
			v &^= n.bit
		}
	}
	if v != 0 {
		p("\t\t\t\t\tUnknown flags: 0x%X", v)
	}
}

func guid(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48&0xffff, g>>32&0xffff, g>>16&0xffff, g&0xffff)
}

func portState(s gorxe.PortState) string {
	switch s {
	case gorxe.PortDown:
		return "PORT_DOWN"
	case gorxe.PortInit:
		return "PORT_INIT"
	case gorxe.PortArmed:
		return "PORT_ARMED"
	case gorxe.PortActive:
		return "PORT_ACTIVE"
	}
	return "invalid state"
}

func mtu(m gorxe.MTU) string {
	if n := m.Bytes(); n != 0 {
		return fmt.Sprint(n)
	}
	return "invalid MTU"
}

func linkLayer(l gorxe.LinkLayer) string {
	switch l {
	case gorxe.LinkLayerUnspecified:
		return "Unspecified"
	case gorxe.LinkLayerInfiniBand:
		return "InfiniBand"
	case gorxe.LinkLayerEthernet:
		return "Ethernet"
	}
	return "Unknown"
}

func atomicCap(c gorxe.AtomicCap) string {
	switch c {
	case gorxe.AtomicNone:
		return "ATOMIC_NONE"
	case gorxe.AtomicHCA:
		return "ATOMIC_HCA"
	case gorxe.AtomicGlob:
		return "ATOMIC_GLOB"
	}
	return "invalid atomic capability"
}

// width spells an IB link width code (1, 2, 4, 8, 16) as its lane count.
func width(w uint8) string {
	switch w {
	case 1:
		return "1"
	case 2:
		return "4"
	case 4:
		return "8"
	case 8:
		return "12"
	case 16:
		return "2"
	}
	return "invalid width"
}

// speed spells an IB link speed code as its per-lane rate.
func speed(s uint8) string {
	switch s {
	case 1:
		return "2.5 Gbps"
	case 2:
		return "5.0 Gbps"
	case 4, 8:
		return "10.0 Gbps"
	case 16:
		return "14.0 Gbps"
	case 32:
		return "25.0 Gbps"
	case 64:
		return "50.0 Gbps"
	case 128:
		return "100.0 Gbps"
	}
	return "invalid speed"
}

// vlNum spells a VL capability code as the number of data VLs.
func vlNum(v uint8) string {
	switch v {
	case 1:
		return "1"
	case 2:
		return "2"
	case 3:
		return "4"
	case 4:
		return "8"
	case 5:
		return "15"
	}
	return "invalid value"
}

func physState(s uint8) string {
	names := [...]string{1: "SLEEP", 2: "POLLING", 3: "DISABLED", 4: "PORT_CONFIGURATION TRAINNING",
		5: "LINK_UP", 6: "LINK_ERROR_RECOVERY", 7: "PHY TEST"}
	if int(s) < len(names) && names[s] != "" {
		return names[s]
	}
	return "invalid physical state"
}
