package cq

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStatusValuesAndText(t *testing.T) {
	cases := []struct {
		s    Status
		v    uint8
		text string
	}{
		{WCSuccess, 0, "success"},
		{WCLocLenErr, 1, "local length error"},
		{WCLocQPOpErr, 2, "local QP operation error"},
		{WCLocEECOpErr, 3, "local EE context operation error"},
		{WCLocProtErr, 4, "local protection error"},
		{WCWRFlushErr, 5, "Work Request Flushed Error"},
		{WCMWBindErr, 6, "memory management operation error"},
		{WCBadRespErr, 7, "bad response error"},
		{WCLocAccessErr, 8, "local access error"},
		{WCRemInvReqErr, 9, "remote invalid request error"},
		{WCRemAccessErr, 10, "remote access error"},
		{WCRemOpErr, 11, "remote operation error"},
		{WCRetryExcErr, 12, "transport retry counter exceeded"},
		{WCRNRRetryExcErr, 13, "RNR retry counter exceeded"},
		{WCLocRDDViolErr, 14, "local RDD violation error"},
		{WCRemInvRDReqErr, 15, "remote invalid RD request"},
		{WCRemAbortErr, 16, "aborted error"},
		{WCInvEECNErr, 17, "invalid EE context number"},
		{WCInvEECStateErr, 18, "invalid EE context state"},
		{WCFatalErr, 19, "fatal error"},
		{WCRespTimeoutErr, 20, "response timeout error"},
		{WCGeneralErr, 21, "general error"},
		{WCTMErr, 22, "TM error"},
		{WCTMRndvIncomplete, 23, "TM software rendezvous"},
		{Status(24), 24, "unknown"},
		{Status(255), 255, "unknown"},
	}
	for _, c := range cases {
		assert.Equal(t, c.v, uint8(c.s), "status %d: value", c.v)
		assert.Equal(t, c.text, c.s.String(), "status %d: text", c.v)
	}
}

func TestOpcodeValues(t *testing.T) {
	cases := []struct {
		o    Opcode
		v    uint8
		name string
		recv bool
	}{
		{OpcodeSend, 0, "SEND", false},
		{OpcodeRDMAWrite, 1, "RDMA_WRITE", false},
		{OpcodeRDMARead, 2, "RDMA_READ", false},
		{OpcodeCompSwap, 3, "COMP_SWAP", false},
		{OpcodeFetchAdd, 4, "FETCH_ADD", false},
		{OpcodeBindMW, 5, "BIND_MW", false},
		{OpcodeLocalInv, 6, "LOCAL_INV", false},
		{OpcodeTSO, 7, "TSO", false},
		{OpcodeFlush, 8, "FLUSH", false},
		{OpcodeAtomicWrite, 9, "ATOMIC_WRITE", false},
		{OpcodeRegMR, 10, "REG_MR", false},
		{OpcodeRecv, 128, "RECV", true},
		{OpcodeRecvRDMAWithImm, 129, "RECV_RDMA_WITH_IMM", true},
		{Opcode(77), 77, "UNKNOWN", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.v, uint8(c.o), "opcode %d: value", c.v)
		assert.Equal(t, c.name, c.o.String(), "opcode %d: name", c.v)
		assert.Equal(t, c.recv, c.o.IsRecv(), "opcode %d: IsRecv", c.v)
	}
	assert.Equal(t, WCFlags(1), WCFlagGRH, "IBV_WC_GRH")
	assert.Equal(t, WCFlags(2), WCFlagWithImm, "IBV_WC_WITH_IMM")
	assert.Equal(t, WCFlags(4), WCFlagIPCsumOK, "IBV_WC_IP_CSUM_OK")
	assert.Equal(t, WCFlags(8), WCFlagWithInv, "IBV_WC_WITH_INV")
}
