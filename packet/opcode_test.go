package packet

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpcodeTable(t *testing.T) {
	type row struct {
		op        Opcode
		name      string
		headers   HeaderSet
		hdrLen    int
		kind      Kind
		pos       Position
		payload   bool
		fixed     int
		request   bool
		response  bool
		imm, inv  bool
		transport Transport
	}
	h := headerSet
	var (
		reth       = h(HeaderRETH)
		aeth       = h(HeaderAETH)
		imm        = h(HeaderImmDt)
		none       HeaderSet
		rc, uc, ud = TransportRC, TransportUC, TransportUD
	)
	rows := []row{
		{RCSendFirst, "RC_SEND_FIRST", none, 12, KindSend, PositionFirst, true, 0, true, false, false, false, rc},
		{RCSendMiddle, "RC_SEND_MIDDLE", none, 12, KindSend, PositionMiddle, true, 0, true, false, false, false, rc},
		{RCSendLast, "RC_SEND_LAST", none, 12, KindSend, PositionLast, true, 0, true, false, false, false, rc},
		{RCSendLastWithImmediate, "RC_SEND_LAST_WITH_IMMEDIATE", imm, 16, KindSend, PositionLast, true, 0, true, false, true, false, rc},
		{RCSendOnly, "RC_SEND_ONLY", none, 12, KindSend, PositionOnly, true, 0, true, false, false, false, rc},
		{RCSendOnlyWithImmediate, "RC_SEND_ONLY_WITH_IMMEDIATE", imm, 16, KindSend, PositionOnly, true, 0, true, false, true, false, rc},
		{RCRDMAWriteFirst, "RC_RDMA_WRITE_FIRST", reth, 28, KindRDMAWrite, PositionFirst, true, 0, true, false, false, false, rc},
		{RCRDMAWriteMiddle, "RC_RDMA_WRITE_MIDDLE", none, 12, KindRDMAWrite, PositionMiddle, true, 0, true, false, false, false, rc},
		{RCRDMAWriteLast, "RC_RDMA_WRITE_LAST", none, 12, KindRDMAWrite, PositionLast, true, 0, true, false, false, false, rc},
		{RCRDMAWriteLastWithImmediate, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", imm, 16, KindRDMAWrite, PositionLast, true, 0, true, false, true, false, rc},
		{RCRDMAWriteOnly, "RC_RDMA_WRITE_ONLY", reth, 28, KindRDMAWrite, PositionOnly, true, 0, true, false, false, false, rc},
		{RCRDMAWriteOnlyWithImmediate, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", h(HeaderRETH, HeaderImmDt), 32, KindRDMAWrite, PositionOnly, true, 0, true, false, true, false, rc},
		{RCRDMAReadRequest, "RC_RDMA_READ_REQUEST", reth, 28, KindRDMAReadRequest, PositionOnly, false, 0, true, false, false, false, rc},
		{RCRDMAReadResponseFirst, "RC_RDMA_READ_RESPONSE_FIRST", aeth, 16, KindRDMAReadResponse, PositionFirst, true, 0, false, true, false, false, rc},
		{RCRDMAReadResponseMiddle, "RC_RDMA_READ_RESPONSE_MIDDLE", none, 12, KindRDMAReadResponse, PositionMiddle, true, 0, false, true, false, false, rc},
		{RCRDMAReadResponseLast, "RC_RDMA_READ_RESPONSE_LAST", aeth, 16, KindRDMAReadResponse, PositionLast, true, 0, false, true, false, false, rc},
		{RCRDMAReadResponseOnly, "RC_RDMA_READ_RESPONSE_ONLY", aeth, 16, KindRDMAReadResponse, PositionOnly, true, 0, false, true, false, false, rc},
		{RCAcknowledge, "RC_ACKNOWLEDGE", aeth, 16, KindAcknowledge, PositionOnly, false, 0, false, true, false, false, rc},
		{RCAtomicAcknowledge, "RC_ATOMIC_ACKNOWLEDGE", h(HeaderAETH, HeaderAtomicAckETH), 24, KindAtomicAcknowledge, PositionOnly, false, 0, false, true, false, false, rc},
		{RCCompareSwap, "RC_COMPARE_SWAP", h(HeaderAtomicETH), 40, KindCompareSwap, PositionOnly, false, 0, true, false, false, false, rc},
		{RCFetchAdd, "RC_FETCH_ADD", h(HeaderAtomicETH), 40, KindFetchAdd, PositionOnly, false, 0, true, false, false, false, rc},
		{RCSendLastWithInvalidate, "RC_SEND_LAST_WITH_INVALIDATE", h(HeaderIETH), 16, KindSend, PositionLast, true, 0, true, false, false, true, rc},
		{RCSendOnlyWithInvalidate, "RC_SEND_ONLY_WITH_INVALIDATE", h(HeaderIETH), 16, KindSend, PositionOnly, true, 0, true, false, false, true, rc},
		{RCFlush, "RC_FLUSH", h(HeaderFETH, HeaderRETH), 32, KindFlush, PositionOnly, false, 0, true, false, false, false, rc},
		{RCAtomicWrite, "RC_ATOMIC_WRITE", reth, 28, KindAtomicWrite, PositionOnly, true, 8, true, false, false, false, rc},
		{UCSendFirst, "UC_SEND_FIRST", none, 12, KindSend, PositionFirst, true, 0, true, false, false, false, uc},
		{UCSendOnlyWithImmediate, "UC_SEND_ONLY_WITH_IMMEDIATE", imm, 16, KindSend, PositionOnly, true, 0, true, false, true, false, uc},
		{UCRDMAWriteFirst, "UC_RDMA_WRITE_FIRST", reth, 28, KindRDMAWrite, PositionFirst, true, 0, true, false, false, false, uc},
		{UCRDMAWriteOnlyWithImmediate, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", h(HeaderRETH, HeaderImmDt), 32, KindRDMAWrite, PositionOnly, true, 0, true, false, true, false, uc},
		{UDSendOnly, "UD_SEND_ONLY", h(HeaderDETH), 20, KindSend, PositionOnly, true, 0, true, false, false, false, ud},
		{UDSendOnlyWithImmediate, "UD_SEND_ONLY_WITH_IMMEDIATE", h(HeaderDETH, HeaderImmDt), 24, KindSend, PositionOnly, true, 0, true, false, true, false, ud},
		{0x40, "RD_SEND_FIRST", h(HeaderRDETH, HeaderDETH), 24, KindSend, PositionFirst, true, 0, true, false, false, false, TransportRD},
		{0x4D, "RD_RDMA_READ_RESPONSE_FIRST", h(HeaderRDETH, HeaderAETH), 20, KindRDMAReadResponse, PositionFirst, true, 0, false, true, false, false, TransportRD},
		{0x53, "RD_COMPARE_SWAP", h(HeaderRDETH, HeaderDETH, HeaderAtomicETH), 52, KindCompareSwap, PositionOnly, false, 0, true, false, false, false, TransportRD},
		{CNP, "CNP", none, 12, KindCNP, PositionOnly, true, 16, false, false, false, false, TransportCNP},
	}
	for i, r := range rows {
		op := r.op
		assert.True(t, op.Valid(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		assert.Equal(t, r.name, op.String(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		assert.Equal(t, r.headers, op.Headers(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		assert.Equal(t, r.hdrLen, op.HeaderLen(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		assert.Equal(t, r.kind, op.Kind(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		assert.Equal(t, r.pos, op.Position(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		assert.Equal(t, r.payload, op.HasPayload(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		assert.Equal(t, r.fixed, op.FixedPayloadLen(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		assert.Equal(t, r.request, op.IsRequest(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		assert.Equal(t, r.response, op.IsResponse(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		assert.Equal(t, r.imm, op.HasImmediate(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		assert.Equal(t, r.inv, op.HasInvalidate(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		assert.Equal(t, r.transport, op.Transport(), "%d: %#02x: got %s %v len %d %v %v payload %v/%d req %v resp %v imm %v inv %v %v", i, uint8(op), op, op.Headers(), op.HeaderLen(), op.Kind(), op.Position(), op.HasPayload(), op.FixedPayloadLen(), op.IsRequest(), op.IsResponse(), op.HasImmediate(), op.HasInvalidate(), op.Transport())
		want := BTHSize + r.headers.Size()
		assert.Equal(t, want, op.HeaderLen(), "%v: HeaderLen %d, headers add up to %d", op, op.HeaderLen(), want)
	}
}

func TestOpcodeHeaderOrder(t *testing.T) {
	// FLUSH puts its FETH before the RETH; UD and RD put DETH/RDETH first.
	cases := []struct {
		op    Opcode
		order []Header
	}{
		{RCFlush, []Header{HeaderFETH, HeaderRETH}},
		{RCRDMAWriteOnlyWithImmediate, []Header{HeaderRETH, HeaderImmDt}},
		{RCAtomicAcknowledge, []Header{HeaderAETH, HeaderAtomicAckETH}},
		{UDSendOnlyWithImmediate, []Header{HeaderDETH, HeaderImmDt}},
		{0x4B, []Header{HeaderRDETH, HeaderDETH, HeaderRETH, HeaderImmDt}},
	}
	for _, c := range cases {
		off := BTHSize
		var got []Header
		for h := range c.op.Headers().All() {
			got = append(got, h)
			o, ok := c.op.HeaderOffset(h)
			assert.True(t, ok, "%v: %v at %d (%v), want %d", c.op, h, o, ok, off)
			assert.Equal(t, off, o, "%v: %v at %d (%v), want %d", c.op, h, o, ok, off)
			off += h.Size()
		}
		require.Len(t, got, len(c.order), "%v: headers %v, want %v", c.op, got, c.order)
		for i := range got {
			assert.Equal(t, c.order[i], got[i], "%v: headers %v, want %v", c.op, got, c.order)
		}
	}
	_, ok := RCSendOnly.HeaderOffset(HeaderRETH)
	assert.False(t, ok, "RC_SEND_ONLY claims a RETH")
}

func TestOpcodeCoverage(t *testing.T) {
	// Exactly the defined opcodes are valid: 25 RC, 12 UC, 21 RD, 2 UD, CNP.
	n := map[Transport]int{}
	for i := 0; i < 256; i++ {
		op := Opcode(i)
		if !op.Valid() {
			if want := "Opcode(0x" + string(hexDigit(uint8(i)>>4)) + string(hexDigit(uint8(i))) + ")"; op.String() != want {
				assert.Fail(t, fmt.Sprintf("invalid opcode %#x prints %q", i, op.String()))
			}
			assert.Equal(t, 0, op.HeaderLen(), "invalid opcode %#x has table data", i)
			assert.Equal(t, KindInvalid, op.Kind(), "invalid opcode %#x has table data", i)
			assert.Equal(t, PositionInvalid, op.Position(), "invalid opcode %#x has table data", i)
			continue
		}
		n[op.Transport()]++
		assert.Equal(t, op, NewOpcode(op.Transport(), op.Operation()), "%v does not round-trip through NewOpcode", op)
	}
	want := map[Transport]int{TransportRC: 25, TransportUC: 12, TransportRD: 21, TransportUD: 2, TransportCNP: 1}
	for tr, c := range want {
		assert.Equal(t, c, n[tr], "%v: %d valid opcodes, want %d", tr, n[tr], c)
	}
	assert.Len(t, n, len(want), "valid opcodes on transports %v", n)
}

func TestHeaderSetString(t *testing.T) {
	got := RCFlush.Headers().String()
	assert.Equal(t, "FETH+RETH", got, "got %q", got)
	got = RCSendOnly.Headers().String()
	assert.Equal(t, "none", got, "got %q", got)
	assert.Equal(t, 0, Header(200).Size(), "unknown header: %d %q", Header(200).Size(), Header(200).String())
	assert.Equal(t, "Header(c8)", Header(200).String(), "unknown header: %d %q", Header(200).Size(), Header(200).String())
}
