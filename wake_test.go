package gorxe

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every blocking call of the API returns when what it waits on goes away. Each case starts the
// call on its own goroutine, then removes the object; whether the call had blocked yet or not, it
// must return the case's error (a goroutine left blocked fails the package's leak check too).
func TestBlockingCallsWake(t *testing.T) {
	type setup struct {
		d  *Device
		ch *CompChannel
		cq *CQ
	}
	for _, tc := range []struct {
		name string
		call func(s *setup) error
		end  func(t *testing.T, s *setup) // what goes away
		want error
	}{
		{"CQ.Wait/Device.Close",
			func(s *setup) error { return s.cq.Wait(context.Background()) },
			func(t *testing.T, s *setup) { require.NoError(t, s.d.Close()) },
			ErrDeviceClosed},
		{"CQ.Wait/CQ.Destroy",
			func(s *setup) error { return s.cq.Wait(context.Background()) },
			func(t *testing.T, s *setup) {
				require.NoError(t, s.cq.Destroy(), "Destroy wakes Wait rather than refusing")
			},
			ErrDestroyed},
		{"CompChannel.GetEvent/Device.Close",
			func(s *setup) error { _, err := s.ch.GetEvent(context.Background()); return err },
			func(t *testing.T, s *setup) { require.NoError(t, s.d.Close()) },
			ErrDeviceClosed},
		{"CompChannel.GetEvent/CompChannel.Destroy",
			func(s *setup) error { _, err := s.ch.GetEvent(context.Background()); return err },
			func(t *testing.T, s *setup) {
				require.ErrorIs(t, s.ch.Destroy(), ErrInUse, "a channel with a CQ is busy, as in rdma-core")
				require.NoError(t, s.cq.Destroy())
				require.NoError(t, s.ch.Destroy())
			},
			ErrDestroyed},
		{"Device.GetAsyncEvent/Device.Close",
			func(s *setup) error {
				ev, err := s.d.GetAsyncEvent(context.Background())
				if err == nil && ev.Type == EventPortActive { // queued by Open
					_, err = s.d.GetAsyncEvent(context.Background())
				}
				return err
			},
			func(t *testing.T, s *setup) { require.NoError(t, s.d.Close()) },
			ErrDeviceClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &setup{d: newTestFabric(t).open(t, "10.0.0.1")}
			var err error
			s.ch, err = s.d.CreateCompChannel()
			require.NoError(t, err)
			s.cq, err = s.d.CreateCQ(4, s.ch)
			require.NoError(t, err)
			res := make(chan error, 1)
			go func() { res <- tc.call(s) }()
			tc.end(t, s)
			err = <-res
			require.ErrorIs(t, err, tc.want)
			var e *Error
			assert.ErrorAs(t, err, &e)
		})
	}
}

// After Close, Wait first reports the completions Close flushed, then ErrDeviceClosed.
func TestCQWaitAfterCloseReportsFlushes(t *testing.T) {
	d := newTestFabric(t).open(t, "10.0.0.1")
	ch, err := d.CreateCompChannel()
	require.NoError(t, err)
	c, err := d.CreateCQ(4, ch)
	require.NoError(t, err)
	x := newTestQPs(t, d)
	x.cq = c
	q := x.create(t, QPTypeRC)
	require.NoError(t, q.Modify(&QPAttr{State: QPStateInit, PortNum: 1}, QPAttrState|QPAttrPKeyIndex|QPAttrPort|QPAttrAccessFlags))
	require.NoError(t, q.PostRecv([]RecvWR{{ID: 9, SGList: []SGE{{Addr: x.mr.Addr(), Length: 8, LKey: x.mr.LKey()}}}}))
	res := make(chan error, 1)
	go func() { res <- c.Wait(context.Background()) }()
	require.NoError(t, d.Close())
	require.NoError(t, <-res, "the flushed receive is there to poll")
	wcs := make([]WC, 2)
	require.Equal(t, 1, c.Poll(wcs))
	assert.Equal(t, WCWRFlushErr, wcs[0].Status)
	require.ErrorIs(t, c.Wait(context.Background()), ErrDeviceClosed)
}
