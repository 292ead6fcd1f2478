package transport

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/mr"
	"github.com/gorxe/gorxe/packet"
	"github.com/gorxe/gorxe/qp"
)

// TestOutputCompletions: Output.Completions counts the work completions a call delivered, and
// nothing else: the stack yields its processor before a long send only when it is non-zero.
func TestOutputCompletions(t *testing.T) {
	t.Run("READ responder", func(t *testing.T) {
		env := newRspEnv(t, rspOptions{access: rcAccess, maxDestRd: 16, mtu: qp.MTU4096})
		m, _ := env.region(64<<10, remoteAccess)
		p := env.req(packet.RCRDMAReadRequest, 0, false, nil, rspRETH(m.IOVA(), m.RKey(), 64<<10))
		env.e.Receive(env.now, p, env.from, &env.out)
		require.Len(t, env.out.Packets, 16)
		assert.Zero(t, env.out.Completions, "16 responses, no completion")
	})
	t.Run("SEND responder", func(t *testing.T) {
		env := newRspEnv(t, rspOptions{access: rcAccess, maxDestRd: 16})
		m, _ := env.region(4096, mr.AccessLocalWrite)
		require.NoError(t, env.q.PostRecv([]qp.RecvWR{{ID: 1, SGList: []mr.SGE{{Addr: m.IOVA(), Length: 4096, LKey: m.LKey()}}}}))
		env.e.Receive(env.now, env.req(packet.RCSendOnly, 0, true, rspPattern(64, 1), nil), env.from, &env.out)
		assert.Equal(t, 1, env.out.Completions)
	})
	t.Run("READ requester", func(t *testing.T) {
		r := newAllocRig(t)
		dst := r.a.d.region(8192, 0)
		require.NoError(t, postSend(r.a.q, []qp.SendWR{{Opcode: qp.WRRDMARead, SGList: []mr.SGE{dst.sge(0, 2048)}, RDMA: qp.RDMAInfo{RKey: 5}}}))
		r.a.e.Run(hStart, &r.out)
		require.Len(t, r.out.Packets, 1)
		aeth := packet.AETHFields{Syndrome: packet.SyndromeACKUnlimited}
		payload := make([]byte, 1024)
		r.respond(&packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCRDMAReadResponseFirst, PSN: 0}, AETH: aeth}, payload)
		assert.Zero(t, r.out.Completions, "first response")
		r.respond(&packet.Headers{BTH: packet.BTHFields{Opcode: packet.RCRDMAReadResponseLast, PSN: 1}, AETH: aeth}, payload)
		assert.Equal(t, 1, r.out.Completions, "last response completes the READ")
		r.out.Reset()
		assert.Zero(t, r.out.Completions, "Reset forgets the count")
	})
}
