package demo

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/netio"
)

// lossSeed returns the fault configuration, at loss rate p, whose seed drops exactly the
// datagrams at the indices in lost among the first n a device sends. The fault generator's
// decisions depend only on the seed and a datagram's position, so running it over n dummy
// datagrams tells which seed produces a given pattern on the real run.
func lossSeed(p float64, n int, lost ...int) (gorxe.FaultConfig, error) {
	want := make([]bool, n)
	for _, i := range lost {
		want[i] = true
	}
	for seed := uint64(1); seed <= 100000; seed++ {
		cfg := gorxe.FaultConfig{Loss: p, Seed: seed}
		if got, err := lossPattern(cfg, n); err != nil {
			return cfg, err
		} else if slices.Equal(got, want) {
			return cfg, nil
		}
	}
	return gorxe.FaultConfig{}, fmt.Errorf("no seed drops exactly datagrams %v of %d at loss %g", lost, n, p)
}

// lossPattern reports which of n datagrams the faults cfg drop.
func lossPattern(cfg gorxe.FaultConfig, n int) ([]bool, error) {
	fc, err := netio.WithFaults(nowhere{}, cfg, nil)
	if err != nil {
		return nil, err
	}
	dropped := make([]bool, 0, n)
	fc.Observe(func(dir netio.Direction, _ *netio.Message) { dropped = append(dropped, dir.Base() == netio.Lost) })
	msg := []netio.Message{{Buf: []byte{0}}}
	for range n {
		if _, err := fc.Send(msg); err != nil {
			return nil, err
		}
	}
	if len(dropped) != n {
		return nil, errors.New("the fault injector showed a datagram twice or not at all")
	}
	return dropped, nil
}

// nowhere is a Conn that accepts every datagram and goes nowhere: the fault injector's decisions
// need somewhere to send to.
type nowhere struct{ netio.Conn }

func (nowhere) Send(msgs []netio.Message) (int, error) { return len(msgs), nil }
