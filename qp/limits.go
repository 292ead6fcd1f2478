package qp

// Limits are the device limits QPs, SRQs and AHs are checked against; the device passes the values
// it reports through ibv_query_device and ibv_query_port.
type Limits struct {
	MaxQP           int // ordinary QPs (QPN 1, the GSI QP, is extra)
	MaxQPWR         int
	MaxSendSGE      int
	MaxRecvSGE      int
	MaxInlineData   int
	MaxSRQWR        int
	MaxSRQSGE       int
	MaxQPRdAtom     int // responder resources (max_dest_rd_atomic)
	MaxQPInitRdAtom int // initiator depth (max_rd_atomic)
	MaxPKeys        int // P_Key table length
	GIDTableLen     int
	PhysPortCnt     uint8
	MaxMTU          MTU // the port's max_mtu
}

// DefaultLimits returns kernel rxe's defaults (rxe_param.h, 6.x).
func DefaultLimits() Limits {
	return Limits{
		MaxQP:           1<<20 - minQPN,
		MaxQPWR:         1 << 20,
		MaxSendSGE:      32,
		MaxRecvSGE:      32,
		MaxInlineData:   512,
		MaxSRQWR:        1 << 20,
		MaxSRQSGE:       27,
		MaxQPRdAtom:     128,
		MaxQPInitRdAtom: 128,
		MaxPKeys:        64,
		GIDTableLen:     1024,
		PhysPortCnt:     1,
		MaxMTU:          MTU4096,
	}
}
