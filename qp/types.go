package qp

import "fmt"

// Type is a QP transport type, with the values of enum ibv_qp_type (GSI as the kernel's IB_QPT_GSI).
type Type uint8

// QP types gorxe implements.
const (
	TypeGSI Type = 1 // IB_QPT_GSI: the general services QP, always QPN 1 (MADs, RDMA-CM)
	TypeRC  Type = 2 // IBV_QPT_RC
	TypeUC  Type = 3 // IBV_QPT_UC
	TypeUD  Type = 4 // IBV_QPT_UD
)

const numTypes = 5 // array size for tables indexed by Type

func (t Type) valid() bool { return t >= TypeGSI && t <= TypeUD }

// datagram reports whether the type addresses each work request with an AH (UD and GSI).
func (t Type) datagram() bool { return t == TypeUD || t == TypeGSI }

// String returns the libibverbs name without the IBV_QPT_ prefix.
func (t Type) String() string {
	switch t {
	case TypeGSI:
		return "GSI"
	case TypeRC:
		return "RC"
	case TypeUC:
		return "UC"
	case TypeUD:
		return "UD"
	}
	return fmt.Sprintf("QPT(%d)", uint8(t))
}

// State is a QP state, with the values of enum ibv_qp_state.
type State uint8

// QP states (IBV_QPS_*).
const (
	StateReset State = 0
	StateInit  State = 1
	StateRTR   State = 2 // ready to receive
	StateRTS   State = 3 // ready to send
	StateSQD   State = 4 // send queue drain(ing/ed)
	StateSQE   State = 5 // send queue error (UC, UD)
	StateErr   State = 6
)

const numStates = 7

// String returns the libibverbs name without the IBV_QPS_ prefix.
func (s State) String() string {
	switch s {
	case StateReset:
		return "RESET"
	case StateInit:
		return "INIT"
	case StateRTR:
		return "RTR"
	case StateRTS:
		return "RTS"
	case StateSQD:
		return "SQD"
	case StateSQE:
		return "SQE"
	case StateErr:
		return "ERR"
	}
	return fmt.Sprintf("QPS(%d)", uint8(s))
}

// MTU is an IB path MTU code, enum ibv_mtu: the payload size of one packet, not an IP MTU.
type MTU uint8

// Path MTUs (IBV_MTU_*).
const (
	MTU256  MTU = 1
	MTU512  MTU = 2
	MTU1024 MTU = 3
	MTU2048 MTU = 4
	MTU4096 MTU = 5
)

// Valid reports whether m is one of MTU256..MTU4096.
func (m MTU) Valid() bool { return m >= MTU256 && m <= MTU4096 }

// Bytes returns the payload size m stands for (ibv_mtu_to_int), or 0 for an invalid code.
func (m MTU) Bytes() int {
	if !m.Valid() {
		return 0
	}
	return 128 << m
}

// MTUFromBytes returns the largest path MTU whose payload fits in n bytes, and false when n is
// below 256. Use it to derive the path MTU from an IP MTU minus the RoCEv2 overhead.
func MTUFromBytes(n int) (MTU, bool) {
	for m := MTU4096; m >= MTU256; m-- {
		if m.Bytes() <= n {
			return m, true
		}
	}
	return 0, false
}

// String prints the size in bytes, as ibv_devinfo does.
func (m MTU) String() string {
	if !m.Valid() {
		return fmt.Sprintf("MTU(%d)", uint8(m))
	}
	return fmt.Sprint(m.Bytes())
}

// MigState is the path migration state of enum ibv_mig_state. RoCE has no alternate paths, so it
// is stored and reported but changes nothing.
type MigState uint8

// Path migration states.
const (
	MigMigrated MigState = 0 // IBV_MIG_MIGRATED
	MigRearm    MigState = 1 // IBV_MIG_REARM
	MigArmed    MigState = 2 // IBV_MIG_ARMED
)
