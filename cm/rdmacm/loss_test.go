package rdmacm

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
	"github.com/gorxe/gorxe/netio"
	"github.com/gorxe/gorxe/packet"
)

// madDropper loses the first MADs of chosen kinds a device sends, so a test decides exactly which
// handshake message the network eats.
type madDropper struct {
	netio.Conn
	mu      sync.Mutex
	drop    map[mad.AttrID]int // how many more of each kind to lose
	dropped map[mad.AttrID]int
	lost    chan struct{} // closed and replaced whenever a MAD is lost
}

func newDropper(drop map[mad.AttrID]int) *madDropper {
	return &madDropper{drop: drop, dropped: make(map[mad.AttrID]int), lost: make(chan struct{})}
}

// waitLost waits until n MADs of kind id have been lost. A MAD is sent by the stack after the
// verb that queued it returns, so a test must wait for it rather than read the count at once.
func (d *madDropper) waitLost(ctx context.Context, id mad.AttrID, n int) error {
	for {
		d.mu.Lock()
		done, lost := d.dropped[id] >= n, d.lost
		d.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-lost:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d %v lost: %w", d.count(id), n, id, ctx.Err())
		}
	}
}

func (d *madDropper) count(id mad.AttrID) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dropped[id]
}

func (d *madDropper) wrap(c netio.Conn) netio.Conn {
	d.Conn = c
	return d
}

// Send passes on every datagram but the MADs still to be lost; those count as sent, as a datagram
// lost in the network does.
func (d *madDropper) Send(msgs []netio.Message) (int, error) {
	keep := make([]netio.Message, 0, len(msgs))
	d.mu.Lock()
	for _, m := range msgs {
		if id, ok := madAttr(m.Buf); ok && d.drop[id] > 0 {
			d.drop[id]--
			d.dropped[id]++
			close(d.lost)
			d.lost = make(chan struct{})
			continue
		}
		keep = append(keep, m)
	}
	d.mu.Unlock()
	if _, err := d.Conn.Send(keep); err != nil {
		return 0, err
	}
	return len(msgs), nil
}

// madAttr returns the attribute of a CM MAD carried to QP1, reading the BTH, DETH and MAD header.
func madAttr(b []byte) (mad.AttrID, bool) {
	var p packet.Parsed
	if packet.Parse(b, &p) != nil || p.BTH().DestQP() != cm.QP1 {
		return 0, false
	}
	m, err := mad.Parse(p.Payload())
	if err != nil {
		return 0, false
	}
	return m.Header().AttrID(), true
}

// TestLostHandshakeMADs loses the first REQ and RTU of the client and the first REP and DREP of the
// server: retransmissions must still connect and disconnect both sides.
func TestLostHandshakeMADs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		cd := newDropper(map[mad.AttrID]int{mad.AttrREQ: 1, mad.AttrRTU: 1, mad.AttrDREQ: 1})
		sd := newDropper(map[mad.AttrID]int{mad.AttrREP: 1, mad.AttrDREP: 1})
		droppers := []*madDropper{cd, sd}
		i := 0
		devs := fabricDevices(t, func(c netio.Conn) netio.Conn { d := droppers[i]; i++; return d.wrap(c) }, clientAddr, "10.0.0.2")
		as := agents(t, devs...)
		client, server := pair(t, ctx, as, nil, nil)
		exchange(t, ctx, client, server, "through the losses")

		require.NoError(t, client.Disconnect(ctx))
		require.NoError(t, client.Close())
		require.NoError(t, server.Close())
		assert.Equal(t, []EventType{EventEstablished, EventDisconnected, EventTimewaitExit}, drain(t, ctx, client))
		drain(t, ctx, server)
		for _, d := range droppers {
			for id, n := range d.drop {
				assert.Zero(t, n, "%v still to drop", id)
			}
		}
		st, err := as[0].Stats(ctx)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, st.CM.Retransmits, uint64(2), "REQ and DREQ retransmitted")
	})
}

// TestUnreachable dials an address where no device answers: the REQ's retries run out.
func TestUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		devs := fabricDevices(t, nil, clientAddr)
		cfg := fastCM
		cfg.CM.MaxCMRetries = 2
		a, err := Open(devs[0], cfg)
		require.NoError(t, err)
		defer a.Close()
		_, err = a.Dial(ctx, serverAddr, nil)
		require.ErrorIs(t, err, cm.ErrTimeout)
	})
}

// TestRandomLoss runs connections, traffic and disconnections through a network that loses a
// fifth of all datagrams at random, MADs and RC packets alike.
func TestRandomLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		fab := netio.NewFabric(netio.FabricConfig{})
		t.Cleanup(fab.Close)
		a, b := netip.MustParseAddr(clientAddr), serverAddr.Addr()
		for i, link := range [][2]netip.Addr{{a, b}, {b, a}} {
			require.NoError(t, fab.SetLinkFaults(link[0], link[1], netio.FaultConfig{Loss: 0.2, Seed: uint64(i + 1)}))
		}
		as := agents(t, openOn(t, fab, nil, clientAddr, serverAddr.Addr().String())...)
		for round := range 3 {
			client, server := pair(t, ctx, as, nil, nil)
			exchange(t, ctx, client, server, fmt.Sprintf("round %d", round))
			require.NoError(t, client.Close())
			require.NoError(t, server.Close())
			drain(t, ctx, client)
			drain(t, ctx, server)
		}
	})
}
