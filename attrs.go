package gorxe

// Device and port attributes, as ibv_query_device and ibv_query_port report them. The values are
// kernel rxe's defaults (rxe_param.h, 6.x) unless a comment says why gorxe differs.

// AtomicCap says how atomic operations are ordered against other accesses (enum ibv_atomic_cap).
type AtomicCap uint8

// Atomic capabilities.
const (
	AtomicNone AtomicCap = 0 // IBV_ATOMIC_NONE
	AtomicHCA  AtomicCap = 1 // IBV_ATOMIC_HCA: atomic among accesses through this device
	AtomicGlob AtomicCap = 2 // IBV_ATOMIC_GLOB: atomic with respect to the CPU as well
)

// String returns the libibverbs constant name without the IBV_ prefix.
func (c AtomicCap) String() string {
	switch c {
	case AtomicNone:
		return "ATOMIC_NONE"
	case AtomicHCA:
		return "ATOMIC_HCA"
	case AtomicGlob:
		return "ATOMIC_GLOB"
	}
	return "ATOMIC_UNKNOWN"
}

// DeviceCapFlags are the IBV_DEVICE_* capability bits of DeviceAttr.DeviceCapFlags.
type DeviceCapFlags uint64

// Device capability bits (libibverbs values).
const (
	DeviceResizeMaxWR      DeviceCapFlags = 1 << 0
	DeviceBadPKeyCntr      DeviceCapFlags = 1 << 1
	DeviceBadQKeyCntr      DeviceCapFlags = 1 << 2
	DeviceRawMulti         DeviceCapFlags = 1 << 3
	DeviceAutoPathMig      DeviceCapFlags = 1 << 4
	DeviceChangePhyPort    DeviceCapFlags = 1 << 5
	DeviceUDAVPortEnforce  DeviceCapFlags = 1 << 6
	DeviceCurrQPStateMod   DeviceCapFlags = 1 << 7
	DeviceShutdownPort     DeviceCapFlags = 1 << 8
	DeviceInitType         DeviceCapFlags = 1 << 9
	DevicePortActiveEvent  DeviceCapFlags = 1 << 10
	DeviceSysImageGUID     DeviceCapFlags = 1 << 11
	DeviceRCRNRNAKGen      DeviceCapFlags = 1 << 12
	DeviceSRQResize        DeviceCapFlags = 1 << 13
	DeviceNNotifyCQ        DeviceCapFlags = 1 << 14
	DeviceMemWindow        DeviceCapFlags = 1 << 17
	DeviceUDIPCsum         DeviceCapFlags = 1 << 18
	DeviceXRC              DeviceCapFlags = 1 << 20
	DeviceMemMgtExtensions DeviceCapFlags = 1 << 21
	DeviceMemWindowType2A  DeviceCapFlags = 1 << 23
	DeviceMemWindowType2B  DeviceCapFlags = 1 << 24
	DeviceRCIPCsum         DeviceCapFlags = 1 << 25
	DeviceRawIPCsum        DeviceCapFlags = 1 << 26
	DeviceManagedFlowSteer DeviceCapFlags = 1 << 29
	DeviceFlushGlobal      DeviceCapFlags = 1 << 38 // IB_DEVICE_FLUSH_GLOBAL (kernel bit)
	DeviceFlushPersistent  DeviceCapFlags = 1 << 39 // IB_DEVICE_FLUSH_PERSISTENT (kernel bit)
	DeviceAtomicWrite      DeviceCapFlags = 1 << 40 // IB_DEVICE_ATOMIC_WRITE (kernel bit)
	deviceCapFlagsOfGorxe                 = DeviceBadPKeyCntr | DeviceBadQKeyCntr | DeviceAutoPathMig |
		DeviceChangePhyPort | DeviceUDAVPortEnforce | DevicePortActiveEvent | DeviceSysImageGUID |
		DeviceRCRNRNAKGen | DeviceSRQResize | DeviceMemMgtExtensions | DeviceMemWindow |
		DeviceMemWindowType2B | DeviceFlushGlobal | DeviceFlushPersistent | DeviceAtomicWrite
)

// DeviceAttr mirrors struct ibv_device_attr.
type DeviceAttr struct {
	FwVer                 string
	NodeGUID              uint64
	SysImageGUID          uint64
	MaxMRSize             uint64
	PageSizeCap           uint64
	VendorID              uint32
	VendorPartID          uint32
	HwVer                 uint32
	MaxQP                 int
	MaxQPWR               int
	DeviceCapFlags        DeviceCapFlags
	MaxSGE                int
	MaxSGERd              int
	MaxCQ                 int
	MaxCQE                int
	MaxMR                 int
	MaxPD                 int
	MaxQPRdAtom           int
	MaxEERdAtom           int
	MaxResRdAtom          int
	MaxQPInitRdAtom       int
	MaxEEInitRdAtom       int
	AtomicCap             AtomicCap
	MaxEE                 int
	MaxRDD                int
	MaxMW                 int
	MaxRawIPv6QP          int
	MaxRawEthyQP          int
	MaxMcastGrp           int
	MaxMcastQPAttach      int
	MaxTotalMcastQPAttach int
	MaxAH                 int
	MaxFMR                int
	MaxMapPerFMR          int
	MaxSRQ                int
	MaxSRQWR              int
	MaxSRQSGE             int
	MaxPKeys              uint16
	LocalCAAckDelay       uint8
	PhysPortCnt           uint8
	MaxInlineData         int // not in ibv_device_attr; what CreateQP accepts as max_inline_data
	MaxFastRegPageList    int // ib_device_attr.max_fast_reg_page_list_len
}

// rxe's defaults (DEFAULT_MAX_VALUE = 1<<20).
const (
	defaultMaxValue = 1 << 20
	rxeVendorID     = 0xffffff // IBTA A3.3.1: no OUI
)

func defaultDeviceAttr() DeviceAttr {
	return DeviceAttr{
		FwVer:                 "0.0.0",
		MaxMRSize:             ^uint64(0),
		PageSizeCap:           0xfffff000,
		VendorID:              rxeVendorID,
		MaxQP:                 defaultMaxValue - 16,
		MaxQPWR:               defaultMaxValue,
		DeviceCapFlags:        deviceCapFlagsOfGorxe,
		MaxSGE:                32,
		MaxSGERd:              32,
		MaxCQ:                 defaultMaxValue,
		MaxCQE:                (1 << 15) - 1,
		MaxMR:                 1 << 19,
		MaxPD:                 defaultMaxValue,
		MaxQPRdAtom:           128,
		MaxResRdAtom:          0x3f000,
		MaxQPInitRdAtom:       128,
		AtomicCap:             AtomicHCA,
		MaxMW:                 1 << 19,
		MaxMcastGrp:           8192,
		MaxMcastQPAttach:      56,
		MaxTotalMcastQPAttach: 0x70000,
		MaxAH:                 (1 << 15) - 1,
		MaxSRQ:                defaultMaxValue,
		MaxSRQWR:              defaultMaxValue,
		MaxSRQSGE:             27,
		MaxPKeys:              64,
		LocalCAAckDelay:       15,
		PhysPortCnt:           1,
		MaxInlineData:         512,
		MaxFastRegPageList:    512,
	}
}

// PortState is enum ibv_port_state.
type PortState uint8

// Port states.
const (
	PortNop         PortState = 0
	PortDown        PortState = 1
	PortInit        PortState = 2
	PortArmed       PortState = 3
	PortActive      PortState = 4
	PortActiveDefer PortState = 5
)

// String returns the ibv_port_state_str name, e.g. "PORT_ACTIVE".
func (s PortState) String() string {
	switch s {
	case PortNop:
		return "PORT_NOP"
	case PortDown:
		return "PORT_DOWN"
	case PortInit:
		return "PORT_INIT"
	case PortArmed:
		return "PORT_ARMED"
	case PortActive:
		return "PORT_ACTIVE"
	case PortActiveDefer:
		return "PORT_ACTIVE_DEFER"
	}
	return "PORT_UNKNOWN"
}

// LinkLayer is the IBV_LINK_LAYER_* value of a port; gorxe ports are always Ethernet.
type LinkLayer uint8

// Link layers.
const (
	LinkLayerUnspecified LinkLayer = 0
	LinkLayerInfiniBand  LinkLayer = 1
	LinkLayerEthernet    LinkLayer = 2
)

// String returns the link layer as ibv_devinfo prints it.
func (l LinkLayer) String() string {
	switch l {
	case LinkLayerInfiniBand:
		return "InfiniBand"
	case LinkLayerEthernet:
		return "Ethernet"
	}
	return "Unknown"
}

// PortCapFlags are the IBV_PORT_* capability bits of PortAttr.PortCapFlags.
type PortCapFlags uint32

// PortCMSup says the port runs a connection manager (rxe sets only this bit).
const PortCMSup PortCapFlags = 1 << 16

// PortAttr mirrors struct ibv_port_attr.
type PortAttr struct {
	State         PortState
	MaxMTU        MTU
	ActiveMTU     MTU
	GIDTblLen     int
	PortCapFlags  PortCapFlags
	MaxMsgSz      uint32
	BadPKeyCntr   uint32
	QKeyViolCntr  uint32
	PKeyTblLen    uint16
	LID           uint16
	SMLID         uint16
	LMC           uint8
	MaxVLNum      uint8
	SMSL          uint8
	SubnetTimeout uint8
	InitTypeReply uint8
	ActiveWidth   uint8
	ActiveSpeed   uint8
	PhysState     uint8
	LinkLayer     LinkLayer
}

// rxe reports 1<<31 as the largest message since about 6.1.
const maxMsgSize = 1 << 31
