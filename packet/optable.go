package packet

// payloadRule says how much payload an opcode may carry.
type payloadRule uint8

const (
	payloadNone     payloadRule = iota // headers only
	payloadVariable                    // 0..MTU bytes
	payloadFixed                       // exactly opInfo.fixedLen bytes
)

const (
	opRequest  = 1 << 0
	opResponse = 1 << 1
)

// opInfo is one row of the opcode table.
type opInfo struct {
	name     string
	kind     Kind
	pos      Position
	headers  HeaderSet
	off      [NumHeaders]uint8 // offset of each present header from the BTH
	hdrLen   uint8             // BTH + extension headers
	payload  payloadRule
	fixedLen uint8
	flags    uint8
}

// Transports an operation exists on, as a bit set.
const (
	onRC = 1 << iota
	onUC
	onRD
	onUD
)

// operations lists every operation once; buildOpTable derives the per-
// transport rows, adding the RDETH/DETH that RD and UD put first.
var operations = [...]struct {
	op         Operation
	name       string
	kind       Kind
	pos        Position
	headers    HeaderSet
	payload    payloadRule
	fixedLen   uint8
	response   bool
	transports uint8
}{
	{OperationSendFirst, "SEND_FIRST", KindSend, PositionFirst, 0, payloadVariable, 0, false, onRC | onUC | onRD},
	{OperationSendMiddle, "SEND_MIDDLE", KindSend, PositionMiddle, 0, payloadVariable, 0, false, onRC | onUC | onRD},
	{OperationSendLast, "SEND_LAST", KindSend, PositionLast, 0, payloadVariable, 0, false, onRC | onUC | onRD},
	{OperationSendLastWithImmediate, "SEND_LAST_WITH_IMMEDIATE", KindSend, PositionLast, headerSet(HeaderImmDt), payloadVariable, 0, false, onRC | onUC | onRD},
	{OperationSendOnly, "SEND_ONLY", KindSend, PositionOnly, 0, payloadVariable, 0, false, onRC | onUC | onRD | onUD},
	{OperationSendOnlyWithImmediate, "SEND_ONLY_WITH_IMMEDIATE", KindSend, PositionOnly, headerSet(HeaderImmDt), payloadVariable, 0, false, onRC | onUC | onRD | onUD},
	{OperationRDMAWriteFirst, "RDMA_WRITE_FIRST", KindRDMAWrite, PositionFirst, headerSet(HeaderRETH), payloadVariable, 0, false, onRC | onUC | onRD},
	{OperationRDMAWriteMiddle, "RDMA_WRITE_MIDDLE", KindRDMAWrite, PositionMiddle, 0, payloadVariable, 0, false, onRC | onUC | onRD},
	{OperationRDMAWriteLast, "RDMA_WRITE_LAST", KindRDMAWrite, PositionLast, 0, payloadVariable, 0, false, onRC | onUC | onRD},
	{OperationRDMAWriteLastWithImmediate, "RDMA_WRITE_LAST_WITH_IMMEDIATE", KindRDMAWrite, PositionLast, headerSet(HeaderImmDt), payloadVariable, 0, false, onRC | onUC | onRD},
	{OperationRDMAWriteOnly, "RDMA_WRITE_ONLY", KindRDMAWrite, PositionOnly, headerSet(HeaderRETH), payloadVariable, 0, false, onRC | onUC | onRD},
	{OperationRDMAWriteOnlyWithImmediate, "RDMA_WRITE_ONLY_WITH_IMMEDIATE", KindRDMAWrite, PositionOnly, headerSet(HeaderRETH, HeaderImmDt), payloadVariable, 0, false, onRC | onUC | onRD},
	{OperationRDMAReadRequest, "RDMA_READ_REQUEST", KindRDMAReadRequest, PositionOnly, headerSet(HeaderRETH), payloadNone, 0, false, onRC | onRD},
	{OperationRDMAReadResponseFirst, "RDMA_READ_RESPONSE_FIRST", KindRDMAReadResponse, PositionFirst, headerSet(HeaderAETH), payloadVariable, 0, true, onRC | onRD},
	{OperationRDMAReadResponseMiddle, "RDMA_READ_RESPONSE_MIDDLE", KindRDMAReadResponse, PositionMiddle, 0, payloadVariable, 0, true, onRC | onRD},
	{OperationRDMAReadResponseLast, "RDMA_READ_RESPONSE_LAST", KindRDMAReadResponse, PositionLast, headerSet(HeaderAETH), payloadVariable, 0, true, onRC | onRD},
	{OperationRDMAReadResponseOnly, "RDMA_READ_RESPONSE_ONLY", KindRDMAReadResponse, PositionOnly, headerSet(HeaderAETH), payloadVariable, 0, true, onRC | onRD},
	{OperationAcknowledge, "ACKNOWLEDGE", KindAcknowledge, PositionOnly, headerSet(HeaderAETH), payloadNone, 0, true, onRC | onRD},
	{OperationAtomicAcknowledge, "ATOMIC_ACKNOWLEDGE", KindAtomicAcknowledge, PositionOnly, headerSet(HeaderAETH, HeaderAtomicAckETH), payloadNone, 0, true, onRC | onRD},
	{OperationCompareSwap, "COMPARE_SWAP", KindCompareSwap, PositionOnly, headerSet(HeaderAtomicETH), payloadNone, 0, false, onRC | onRD},
	{OperationFetchAdd, "FETCH_ADD", KindFetchAdd, PositionOnly, headerSet(HeaderAtomicETH), payloadNone, 0, false, onRC | onRD},
	{OperationSendLastWithInvalidate, "SEND_LAST_WITH_INVALIDATE", KindSend, PositionLast, headerSet(HeaderIETH), payloadVariable, 0, false, onRC},
	{OperationSendOnlyWithInvalidate, "SEND_ONLY_WITH_INVALIDATE", KindSend, PositionOnly, headerSet(HeaderIETH), payloadVariable, 0, false, onRC},
	{OperationFlush, "FLUSH", KindFlush, PositionOnly, headerSet(HeaderFETH, HeaderRETH), payloadNone, 0, false, onRC},
	{OperationAtomicWrite, "ATOMIC_WRITE", KindAtomicWrite, PositionOnly, headerSet(HeaderRETH), payloadFixed, 8, false, onRC},
}

// cnpReservedLen is the length of the reserved block that follows a CNP's BTH.
const cnpReservedLen = 16

// opTable is indexed by opcode; undefined opcodes have KindInvalid.
var opTable = buildOpTable()

func buildOpTable() *[256]opInfo {
	var t [256]opInfo
	transports := [...]struct {
		bit   uint8
		t     Transport
		extra func(response bool) HeaderSet
	}{
		{onRC, TransportRC, func(bool) HeaderSet { return 0 }},
		{onUC, TransportUC, func(bool) HeaderSet { return 0 }},
		{onRD, TransportRD, func(response bool) HeaderSet {
			if response {
				return headerSet(HeaderRDETH)
			}
			return headerSet(HeaderRDETH, HeaderDETH)
		}},
		{onUD, TransportUD, func(bool) HeaderSet { return headerSet(HeaderDETH) }},
	}
	for _, o := range operations {
		for _, tr := range transports {
			if o.transports&tr.bit == 0 {
				continue
			}
			flags := uint8(opRequest)
			if o.response {
				flags = opResponse
			}
			t[NewOpcode(tr.t, o.op)] = makeOpInfo(tr.t.String()+"_"+o.name, o.kind, o.pos,
				o.headers|tr.extra(o.response), o.payload, o.fixedLen, flags)
		}
	}
	t[CNP] = makeOpInfo("CNP", KindCNP, PositionOnly, 0, payloadFixed, cnpReservedLen, 0)
	return &t
}

func makeOpInfo(name string, kind Kind, pos Position, hs HeaderSet, pay payloadRule, fixedLen, flags uint8) opInfo {
	e := opInfo{name: name, kind: kind, pos: pos, headers: hs, payload: pay, fixedLen: fixedLen, flags: flags}
	off := BTHSize
	for h := range hs.All() {
		e.off[h] = uint8(off)
		off += h.Size()
	}
	e.hdrLen = uint8(off)
	return e
}
