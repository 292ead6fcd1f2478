package mr

import "sync/atomic"

// objState is the life-cycle state of a region or window as seen by lookups.
//
//	free ──(fast reg / bind)──► valid ──(invalidate)──► free
//	  any ──(rereg, bind, reg)──► busy ──► valid|free       any ──(dereg)──► dead
type objState uint32

const (
	stateDead  objState = iota // deregistered; zero value so an unpublished object is unusable
	stateValid                 // usable through its key
	stateFree                  // fast-reg region invalidated, or type 2 window unbound
	stateBusy                  // a control operation is changing the fields
)

// gate lets lookups read an object's fields without a lock. A reader announces itself in holds
// and then reads state; a writer stores busy and then waits for holds to drain. Go's atomics are
// sequentially consistent, so either the reader sees busy and backs off, or the writer sees the
// hold and waits: fields are never read while they change, and after close returns no access
// through the old translation is still running.
//
// A waiting writer sleeps on wake instead of spinning, so it is not starved when the workers that
// hold the object keep every CPU busy; the reader that drops the last hold wakes it.
type gate struct {
	state   atomic.Uint32
	holds   atomic.Int32
	waiting atomic.Bool
	wake    chan struct{} // capacity 1; made by init
}

// init prepares the gate in state s; called once before the object is published.
func (g *gate) init(s objState) {
	g.wake = make(chan struct{}, 1)
	g.state.Store(uint32(s))
}

// enter takes a hold if the object is valid or free and reports the state it saw; for busy or
// dead the hold is not kept.
func (g *gate) enter() objState {
	// The first look keeps readers of a busy object from touching holds at all, so a stream of
	// failing lookups does not keep waking the writer.
	if s := objState(g.state.Load()); s != stateValid && s != stateFree {
		return s
	}
	g.holds.Add(1)
	s := objState(g.state.Load())
	if s != stateValid && s != stateFree {
		g.leave()
	}
	return s
}

// leave drops a hold taken by enter, waking a waiting writer when it was the last.
func (g *gate) leave() {
	if g.holds.Add(-1) == 0 && g.waiting.Load() {
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}

// close moves the object to busy, waits until no reader holds it and returns the previous state.
// The caller must own the object's control mutex. Holds last one copy, so the wait is short.
func (g *gate) close() objState {
	prev := objState(g.state.Swap(uint32(stateBusy)))
	if g.holds.Load() != 0 {
		g.waiting.Store(true)
		for g.holds.Load() != 0 {
			<-g.wake
		}
		g.waiting.Store(false)
		select { // drop a token a late reader may have left
		case <-g.wake:
		default:
		}
	}
	return prev
}

// open publishes the state after a change made while closed.
func (g *gate) open(s objState) { g.state.Store(uint32(s)) }

// load returns the current state for control operations, which hold the object's mutex.
func (g *gate) load() objState { return objState(g.state.Load()) }
