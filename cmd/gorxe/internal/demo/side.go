package demo

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/gorxe/gorxe"
	"github.com/gorxe/gorxe/netio"
)

// side is one of the two devices and the verbs objects every step shares: a protection domain, one
// completion queue (with a channel to sleep on) and one registered buffer.
type side struct {
	name     string
	dev      *gorxe.Device
	pd       *gorxe.PD
	ch       *gorxe.CompChannel
	cq       *gorxe.CQ
	buf      []byte
	mr       *gorxe.MR
	gid      gorxe.GID
	gidIndex uint8
}

const (
	bufSize = 1 << 20
	cqDepth = 256
)

func openSide(name string, addr netip.Addr, o *Options, tap netio.TapFunc) (*side, error) {
	cfg := gorxe.Config{Addr: addr, Port: o.Port, Faults: o.Faults, Tap: tap, Logger: o.Logger}
	dev, err := gorxe.Open(cfg)
	if err != nil {
		return nil, fmt.Errorf("device %s on %s: %w", name, addr, err)
	}
	s := &side{name: name, dev: dev}
	if err := s.setup(addr); err != nil {
		dev.Close()
		return nil, fmt.Errorf("device %s: %w", name, err)
	}
	return s, nil
}

func (s *side) setup(addr netip.Addr) error {
	var err error
	if s.pd, err = s.dev.AllocPD(); err != nil {
		return err
	}
	if s.ch, err = s.dev.CreateCompChannel(); err != nil {
		return err
	}
	if s.cq, err = s.dev.CreateCQ(cqDepth, s.ch); err != nil {
		return err
	}
	s.buf = make([]byte, bufSize)
	access := gorxe.AccessLocalWrite | gorxe.AccessRemoteWrite | gorxe.AccessRemoteRead | gorxe.AccessRemoteAtomic
	if s.mr, err = s.pd.RegMR(s.buf, access); err != nil {
		return err
	}
	// The GID of the bound address: index 1 for IPv4 (IPv4-mapped), as with rxe.
	want := gorxe.GIDFromAddr(addr)
	for _, e := range s.dev.GIDTable() {
		if e.GID == want {
			s.gid, s.gidIndex = e.GID, uint8(e.Index)
			return nil
		}
	}
	return fmt.Errorf("address %s is not in the GID table", addr)
}

func (s *side) close() { s.dev.Close() }

// addr returns the IOVA of buf[off], the address a work request names.
func (s *side) addr(off int) uint64 { return s.mr.Addr() + uint64(off) }

// sge names n bytes of the registered buffer at off.
func (s *side) sge(off, n int) []gorxe.SGE {
	return []gorxe.SGE{{Addr: s.addr(off), Length: uint32(n), LKey: s.mr.LKey()}}
}

// wait returns the next n work completions of the side's CQ, sleeping on the completion channel
// between polls the way an event-driven verbs program does.
func (s *side) wait(ctx context.Context, n int) ([]gorxe.WC, error) {
	got := make([]gorxe.WC, 0, n)
	wcs := make([]gorxe.WC, n)
	for {
		k := s.cq.Poll(wcs[:n-len(got)])
		got = append(got, wcs[:k]...)
		if len(got) == n {
			return got, nil
		}
		if err := s.cq.ReqNotify(false); err != nil {
			return got, err
		}
		// A completion may have arrived between Poll and ReqNotify: poll once more before sleeping.
		if k = s.cq.Poll(wcs[:n-len(got)]); k > 0 {
			got = append(got, wcs[:k]...)
			if len(got) == n {
				return got, nil
			}
			continue
		}
		cq, err := s.ch.GetEvent(ctx)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return got, fmt.Errorf("%s: waited for %d completions, got %d", s.name, n, len(got))
			}
			return got, err
		}
		cq.AckEvents(1)
	}
}
