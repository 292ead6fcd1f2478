package stack

import (
	"context"
	"log/slog"
	"time"

	"github.com/gorxe/gorxe/qp"
	"github.com/gorxe/gorxe/transport"
)

// The stack turns what the engines report (transport.Event) into records on the device's
// logger, whose attributes name the device; every record about a QP names its QPN. Errors that
// end a QP's work are logged at Warn, state changes and retransmit timeouts at Info, and what can
// happen once per packet (NAKs, RNR waits) at Debug only, so nothing is logged per packet at Info.

// eventLevel returns the level events of kind k are logged at.
func eventLevel(k transport.EventKind) slog.Level {
	switch k {
	case transport.EventQPError, transport.EventCompletionError:
		return slog.LevelWarn
	case transport.EventRetryTimeout:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

// limited reports whether events of kind k are rate-limited: everything but the errors, which end
// the QP's work and so cannot repeat faster than the user reconnects.
func limited(k transport.EventKind) bool {
	return k != transport.EventQPError && k != transport.EventCompletionError
}

// A QP logs at most logBurst records of one kind of rate-limited event per logInterval: enough
// for the retransmit timeouts of a whole retry_cnt, few enough that a flood of NAKs does not
// swamp the log. The events left out are counted, and the next record says how many.
const (
	logInterval = time.Second
	logBurst    = 10
)

// logLimit is a QP's rate-limit state, one entry per kind of event.
type logLimit [transport.NumEventKinds]struct {
	since      time.Time // start of the current interval
	logged     int       // records logged in it
	suppressed uint64    // events left out since the last record
}

// allow reports whether an event of kind k at now is logged and, if so, how many were left out
// before it.
func (l *logLimit) allow(k transport.EventKind, now time.Time) (suppressed uint64, ok bool) {
	e := &l[k]
	if e.since.IsZero() || now.Sub(e.since) >= logInterval {
		e.since, e.logged = now, 0
	}
	if e.logged == logBurst {
		e.suppressed++
		return 0, false
	}
	e.logged++
	suppressed, e.suppressed = e.suppressed, 0
	return suppressed, true
}

// eventMask returns the kinds of events the logger currently wants, for transport.Output.Want.
// It asks the handler once per level, so a level changed at run time (slog.LevelVar) takes
// effect at the next drain.
func (r *Stack) eventMask() transport.EventMask {
	ctx := context.Background()
	var m transport.EventMask
	for _, l := range [...]slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn} {
		if !r.log.Enabled(ctx, l) {
			continue
		}
		for k := transport.EventKind(1); k < transport.NumEventKinds; k++ {
			if eventLevel(k) == l {
				m |= k.Mask()
			}
		}
	}
	return m
}

// report logs the events h's engine recorded in the call that just ended, then forgets them.
// The caller holds the worker's run lock, which guards h's rate limits.
func (w *worker) report(h *QP) {
	now := w.r.clk.Now()
	for i := range w.out.Events {
		w.r.logEvent(h, &w.out.Events[i], now)
	}
	w.out.ResetEvents()
}

// logEvent logs one event of h's engine.
func (r *Stack) logEvent(h *QP, ev *transport.Event, now time.Time) {
	var suppressed uint64
	if limited(ev.Kind) {
		var ok bool
		if suppressed, ok = h.limit.allow(ev.Kind, now); !ok {
			return
		}
	}
	var msg string
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs, slog.Uint64("qpn", uint64(ev.QPN)))
	switch ev.Kind {
	case transport.EventQPError:
		msg = msgQPState
		cause := ev.Status.String()
		if ev.Overrun {
			cause = "completion queue overrun"
		}
		attrs = append(attrs, slog.String("from", ev.From.String()), slog.String("to", ev.To.String()),
			slog.String("cause", cause))
	case transport.EventCompletionError:
		msg = "gorxe completion error"
		queue := "send"
		if ev.Recv {
			queue = "recv"
		}
		attrs = append(attrs, slog.String("status", ev.Status.String()), slog.String("opcode", ev.Opcode.String()),
			slog.Uint64("wr_id", ev.WRID), slog.String("queue", queue))
	case transport.EventRetryTimeout:
		msg = "gorxe retransmit timeout"
		attrs = append(attrs, slog.Uint64("psn", uint64(ev.PSN)), slog.Int("retries_left", int(ev.RetriesLeft)))
	case transport.EventRNRTimeout:
		msg = "gorxe rnr timeout"
		attrs = append(attrs, slog.Uint64("psn", uint64(ev.PSN)), slog.Int("rnr_retries_left", int(ev.RetriesLeft)))
	case transport.EventNAKSent:
		msg = "gorxe nak sent"
		attrs = append(attrs, slog.Uint64("psn", uint64(ev.PSN)), slog.String("syndrome", ev.Syndrome.String()))
	case transport.EventNAKReceived:
		msg = "gorxe nak received"
		attrs = append(attrs, slog.Uint64("psn", uint64(ev.PSN)), slog.String("syndrome", ev.Syndrome.String()))
	default:
		msg = "gorxe transport event"
		attrs = append(attrs, slog.String("kind", ev.Kind.String()))
	}
	if suppressed > 0 {
		attrs = append(attrs, slog.Uint64("suppressed", suppressed))
	}
	r.log.LogAttrs(context.Background(), eventLevel(ev.Kind), msg, attrs...)
}

// msgQPState is the message of every record of a QP state change.
const msgQPState = "gorxe qp state"

// logState logs a state change of h that a verb or the device made (the engine reports its own);
// reason, when not empty, says why.
func (r *Stack) logState(h *QP, from, to qp.State, reason string) {
	ctx := context.Background()
	if from == to || !r.log.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{slog.Uint64("qpn", uint64(h.qpn)), slog.String("from", from.String()), slog.String("to", to.String())}
	if reason != "" {
		attrs = append(attrs, slog.String("reason", reason))
	}
	r.log.LogAttrs(ctx, slog.LevelInfo, msgQPState, attrs...)
}
