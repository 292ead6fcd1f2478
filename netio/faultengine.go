package netio

import (
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// FaultCounters is a snapshot of what a fault injector did.
type FaultCounters struct {
	Sent       uint64 // datagrams offered to the injector
	Dropped    uint64 // lost on purpose
	Duplicated uint64 // delivered an extra time
	Reordered  uint64 // held back to be overtaken
	Corrupted  uint64 // had one bit flipped
	Delayed    uint64 // delivered later than sent (delay, jitter or reordering), duplicates included
}

type faultCounters struct {
	sent, dropped, duplicated, reordered, corrupted, delayed atomic.Uint64
}

func (c *faultCounters) snapshot() FaultCounters {
	return FaultCounters{
		Sent:       c.sent.Load(),
		Dropped:    c.dropped.Load(),
		Duplicated: c.duplicated.Load(),
		Reordered:  c.reordered.Load(),
		Corrupted:  c.corrupted.Load(),
		Delayed:    c.delayed.Load(),
	}
}

// faultPlan is the fate of one datagram.
type faultPlan struct {
	drop       bool
	copies     int              // 1, or 2 when duplicated
	corruptBit int              // bit to flip counting from the first byte's MSB, or -1
	delay      [2]time.Duration // per copy
}

// direction returns how an observer is shown copy k (0 or 1) of a datagram that was not dropped.
func (p *faultPlan) direction(k int) Direction {
	d := Sent
	if k > 0 {
		d |= Duplicate
	}
	if p.corruptBit >= 0 {
		d |= Corrupt
	}
	if p.delay[k] > 0 {
		d |= Delayed
	}
	return d
}

// faultEngine decides the fate of each datagram on one path. It is not safe for concurrent use.
type faultEngine struct {
	cfg      FaultConfig
	rng      *rand.Rand
	counters faultCounters
}

func newFaultEngine(cfg FaultConfig) *faultEngine {
	// The second PCG word is a fixed odd constant so that seeds 0, 1, 2... give unrelated streams.
	return &faultEngine{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))}
}

// plan draws the same number of random values for every datagram, whatever the outcome, so the
// fault pattern of a datagram depends only on the seed and its position in the sequence.
func (e *faultEngine) plan(size int) faultPlan {
	uLoss, uCorrupt, bit := e.rng.Float64(), e.rng.Float64(), e.rng.Uint64()
	uDup, uReorder := e.rng.Float64(), e.rng.Float64()
	uJitter0, uJitter1 := e.rng.Float64(), e.rng.Float64()

	e.counters.sent.Add(1)
	p := faultPlan{copies: 1, corruptBit: -1}
	if uLoss < e.cfg.Loss {
		e.counters.dropped.Add(1)
		p.drop = true
		return p
	}
	if uCorrupt < e.cfg.Corrupt && size > 0 {
		e.counters.corrupted.Add(1)
		p.corruptBit = int(bit % uint64(size*8))
	}
	if uDup < e.cfg.Dup {
		e.counters.duplicated.Add(1)
		p.copies = 2
	}
	extra := time.Duration(0)
	if uReorder < e.cfg.Reorder {
		e.counters.reordered.Add(1)
		extra = e.cfg.ReorderDelay
		if extra == 0 {
			extra = DefaultReorderDelay
		}
	}
	p.delay[0] = e.cfg.Delay + time.Duration(uJitter0*float64(e.cfg.Jitter)) + extra
	p.delay[1] = e.cfg.Delay + time.Duration(uJitter1*float64(e.cfg.Jitter))
	for i := 0; i < p.copies; i++ {
		if p.delay[i] > 0 {
			e.counters.delayed.Add(1)
		}
	}
	return p
}

// flipBit inverts bit n of b, counting from the most significant bit of b[0].
func flipBit(b []byte, n int) {
	if n >= 0 && n < len(b)*8 {
		b[n/8] ^= 0x80 >> (n % 8)
	}
}
