package qp

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cq"
	"github.com/gorxe/gorxe/mr"
)

// TestConcurrentPostAndEngine has several goroutines posting sends and receives while one engine
// goroutine starts, completes and pops, and a poller drains the CQs. Every signaled send and every
// receive completes exactly once, and each poster's requests complete in posting order.
func TestConcurrentPostAndEngine(t *testing.T) {
	const posters, perPoster = 4, 500
	e := newEnv(t)
	// The engine goroutine waits on wake; posters kick it after posting, as the device runtime is
	// told after each post.
	wake := make(chan struct{}, 1)
	kick := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	e.table = NewTable(Config{Limits: DefaultLimits()})
	scq, _ := cq.New(cq.MaxCQE, cq.Options{})
	rcq, _ := cq.New(cq.MaxCQE, cq.Options{})
	q, err := e.table.CreateQP(e.pd, &InitAttr{Type: TypeRC, SendCQ: scq, RecvCQ: rcq,
		Cap: Caps{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(t, err)
	e.to(q, StateRTS)

	nudge := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
		runtime.Gosched()
	}
	var posting sync.WaitGroup
	for p := range posters {
		posting.Go(func() {
			for i := 0; i < perPoster; i++ {
				id := uint64(p)<<32 | uint64(i)
				for postSend(q, []SendWR{{ID: id, Opcode: WRSend, Flags: SendSignaled, SGList: []mr.SGE{{Length: 1}}}}) != nil {
					nudge()
				}
				kick()
				for q.PostRecv([]RecvWR{{ID: id}}) != nil {
					nudge()
				}
				kick()
			}
		})
	}
	done := make(chan struct{})
	var engine sync.WaitGroup
	engine.Go(func() {
		sq := q.SendQueue()
		var rw RecvWQE
		for {
			busy := false
			for {
				w, ok := sq.StartNext()
				if !ok {
					break
				}
				assert.NoError(t, sq.Complete(w.Index, cq.WCSuccess, 0))
				busy = true
			}
			for q.PopRecv(&rw) {
				assert.NoError(t, q.CompleteRecv(&rw, &cq.WC{Opcode: cq.OpcodeRecv}, false))
				busy = true
			}
			if !busy {
				select {
				case <-wake:
				case <-done:
					return
				}
			}
		}
	})

	// One poller drains both CQs; a poster's send and receive sequences must each stay in order.
	next := [2][]uint64{make([]uint64, posters), make([]uint64, posters)}
	buf := make([]cq.WC, 64)
	for total := 0; total < 2*posters*perPoster; {
		got := 0
		for side, c := range []*cq.CQ{scq, rcq} {
			n := c.Poll(buf)
			for _, wc := range buf[:n] {
				p, seq := wc.WRID>>32, wc.WRID&0xffffffff
				require.Equal(t, next[side][p], seq, "side %d: poster %d: sequence", side, p)
				require.Equal(t, cq.WCSuccess, wc.Status, "side %d: poster %d: status", side, p)
				next[side][p]++
			}
			got += n
		}
		total += got
		if got == 0 {
			nudge()
		}
	}
	posting.Wait()
	close(done)
	engine.Wait()
}
