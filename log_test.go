package gorxe

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logRecord is one record a recorder kept, its attributes (the logger's first) as text.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// recorder is a slog.Handler that keeps every record.
type recorder struct {
	mu    *sync.Mutex
	recs  *[]logRecord
	attrs []slog.Attr
}

func newRecorder() *recorder { return &recorder{mu: new(sync.Mutex), recs: new([]logRecord)} }

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	lr := logRecord{level: rec.Level, msg: rec.Message, attrs: map[string]string{}}
	for _, a := range r.attrs {
		lr.attrs[a.Key] = a.Value.String()
	}
	rec.Attrs(func(a slog.Attr) bool {
		lr.attrs[a.Key] = a.Value.String()
		return true
	})
	r.mu.Lock()
	*r.recs = append(*r.recs, lr)
	r.mu.Unlock()
	return nil
}

func (r *recorder) WithAttrs(as []slog.Attr) slog.Handler {
	c := *r
	c.attrs = append(slices.Clip(r.attrs), as...)
	return &c
}

func (r *recorder) WithGroup(string) slog.Handler { return r }

// find returns the records with message msg whose attributes include want.
func (r *recorder) find(msg string, want map[string]string) []logRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []logRecord
	for _, rec := range *r.recs {
		if rec.msg != msg {
			continue
		}
		match := true
		for k, v := range want {
			match = match && rec.attrs[k] == v
		}
		if match {
			out = append(out, rec)
		}
	}
	return out
}

// A QP whose peer never answers logs every retransmit timeout with the retries left, then the
// completion error and its state change to ERR at Warn, each record naming the device and the QP.
func TestLogRetryExhaustedQP(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newTestFabric(t)
		rec := newRecorder()
		d, err := Open(Config{Addr: netip.MustParseAddr("10.0.0.1"), Network: f.fab.Network(), Clock: f.clk, Workers: 2,
			Name: "gorxe_logtest", Logger: slog.New(rec)})
		require.NoError(t, err)
		a := newNode(t, d)
		q := a.qp(t, QPTypeRC)
		connectRC(t, q, GIDFromAddr(mustAddr("10.0.0.99")), 123, 0, 0, MTU1024)
		require.NoError(t, q.PostSend([]SendWR{{ID: 1, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 10)}}))
		// The first transmission and seven retransmissions each arm the retransmit timer.
		for range 8 {
			f.clk.AdvanceTo(waitAnyTimer(t, f.clk))
		}
		wcs := a.wait(t, 1)
		require.Equal(t, WCRetryExcErr, wcs[0].Status)
		// Close waits for the workers, so everything the failure logs has been logged.
		require.NoError(t, d.Close())

		// with returns the attributes every record of q has, and kv.
		with := func(kv ...string) map[string]string {
			m := map[string]string{"device": "gorxe_logtest", "qpn": itoa(q.QPN())}
			for i := 0; i < len(kv); i += 2 {
				m[kv[i]] = kv[i+1]
			}
			return m
		}
		for _, to := range []string{"INIT", "RTR", "RTS"} {
			rs := rec.find("gorxe qp state", with("to", to))
			if assert.Len(t, rs, 1, "state change to %s", to) {
				assert.Equal(t, slog.LevelInfo, rs[0].level)
			}
		}
		for left := 6; left >= 0; left-- {
			assert.Len(t, rec.find("gorxe retransmit timeout", with("retries_left", itoa(uint32(left)), "psn", "0")), 1,
				"retransmit timeout with %d retries left", left)
		}
		failed := rec.find("gorxe completion error", with("status", "transport retry counter exceeded", "wr_id", "1",
			"opcode", WCSend.String(), "queue", "send"))
		if assert.Len(t, failed, 1) {
			assert.Equal(t, slog.LevelWarn, failed[0].level)
		}
		toErr := rec.find("gorxe qp state", with("from", "RTS", "to", "ERR", "cause", "transport retry counter exceeded"))
		if assert.Len(t, toErr, 1) {
			assert.Equal(t, slog.LevelWarn, toErr[0].level)
		}
		assert.Len(t, rec.find("gorxe device closed", map[string]string{"device": "gorxe_logtest"}), 1)
	})
}

// Closing a device logs each QP it moves to ERR, with the reason.
func TestLogCloseMovesQPs(t *testing.T) {
	f := newTestFabric(t)
	rec := newRecorder()
	d, err := Open(Config{Addr: netip.MustParseAddr("10.0.0.1"), Network: f.fab.Network(), Clock: f.clk, Workers: 2,
		Logger: slog.New(rec)})
	require.NoError(t, err)
	n := newNode(t, d)
	q, idle := n.qp(t, QPTypeRC), n.qp(t, QPTypeRC)
	connectRC(t, q, GIDFromAddr(mustAddr("10.0.0.99")), 123, 0, 0, MTU1024)
	require.NoError(t, d.Close())
	assert.Len(t, rec.find("gorxe qp state", map[string]string{
		"device": d.Name(), "qpn": itoa(q.QPN()), "from": "RTS", "to": "ERR", "reason": "device closed",
	}), 1)
	assert.Empty(t, rec.find("gorxe qp state", map[string]string{"qpn": itoa(idle.QPN())}),
		"a QP in RESET stays there (RESET to ERR is no transition)")
}

// With logging off or at Info, a device allocates nothing per message once warm and logs
// nothing for healthy traffic: the engines record no events the logger would drop, and nothing
// is logged per packet at Info.
func TestLogNoAllocationsPerPacket(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	var records atomic.Int64
	for _, c := range []struct {
		name string
		log  *slog.Logger
	}{
		{"off", nil},
		{"info", slog.New(countingHandler{slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}), &records})},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newTestFabric(t)
			open := func(addr string) *node {
				// The real clock: the fake one allocates when timers change.
				d, err := Open(Config{Addr: netip.MustParseAddr(addr), Network: f.fab.Network(), Workers: 2, Logger: c.log})
				require.NoError(t, err)
				t.Cleanup(func() { d.Close() })
				return newNode(t, d)
			}
			a, b := open("10.0.0.1"), open("10.0.0.2")
			// A retransmit timeout (logged at Info) must not fire on a loaded machine: 68 s.
			qa, qb := a.qp(t, QPTypeRC), b.qp(t, QPTypeRC)
			connectRCTimeout(t, qa, b.gid, qb.QPN(), 0x100, 0x200, MTU1024, 24)
			connectRCTimeout(t, qb, a.gid, qa.QPN(), 0x200, 0x100, MTU1024, 24)
			send := []SendWR{{ID: 1, Opcode: WRSend, Flags: SendSignaled, SGList: a.sge(0, 64)}}
			recv := []RecvWR{{ID: 2, SGList: b.sge(0, 64)}}
			var wcs [4]WC
			poll := func(n *node) {
				for n.cq.Poll(wcs[:]) == 0 {
					runtime.Gosched()
				}
			}
			round := func() {
				if qb.PostRecv(recv) != nil || qa.PostSend(send) != nil {
					panic("post failed")
				}
				poll(a)
				poll(b)
			}
			for range 50 {
				round()
			}
			before := records.Load()
			assert.Zero(t, testing.AllocsPerRun(200, round), "allocations per SEND and its ACK")
			assert.Equal(t, before, records.Load(), "records logged by the traffic")
		})
	}
}

// countingHandler counts the records its handler handles.
type countingHandler struct {
	slog.Handler
	n *atomic.Int64
}

func (h countingHandler) Handle(ctx context.Context, r slog.Record) error {
	h.n.Add(1)
	return h.Handler.Handle(ctx, r)
}

func (h countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return countingHandler{h.Handler.WithAttrs(as), h.n}
}

func (h countingHandler) WithGroup(name string) slog.Handler {
	return countingHandler{h.Handler.WithGroup(name), h.n}
}

func itoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
