package rdmacm

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/cm"
	"github.com/gorxe/gorxe/cm/mad"
)

// TestECEBothWays: the client's Options.ECE reaches the server's Request and Conn, the server's
// reaches the client's Conn; the server answers as librdmacm's rdma_accept does, with the REQ's
// vendor ID and options of its own.
func TestECEBothWays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := twoAgents(t)
		l := serverListener(t, ctx, as[1], nil)
		clientECE := cm.ECE{VendorID: 0x02c9a1, Options: 0xfedcba98}
		accepted := make(chan *Conn, 1)
		go func() {
			defer close(accepted)
			req, err := l.Next(ctx)
			if !assert.NoError(t, err) {
				return
			}
			assert.Equal(t, clientECE, req.RemoteECE())
			c, err := req.Accept(ctx, &Options{ECE: cm.ECE{VendorID: req.RemoteECE().VendorID, Options: 0x5}})
			if assert.NoError(t, err) {
				accepted <- c
			}
		}()
		client, err := as[0].Dial(ctx, serverAddr, &Options{ECE: clientECE})
		require.NoError(t, err)
		server := <-accepted
		require.NotNil(t, server)
		assert.Equal(t, cm.ECE{VendorID: 0x02c9a1, Options: 0x5}, client.RemoteECE())
		assert.Equal(t, clientECE, server.RemoteECE())
		closeBoth(t, ctx, client, server)
	})
}

// TestECEDefaultZero: without Options.ECE both sides read zero, what a peer without ECE sends.
func TestECEDefaultZero(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := twoAgents(t)
		client, server := pair(t, ctx, as, nil, nil)
		assert.Zero(t, client.RemoteECE())
		assert.Zero(t, server.RemoteECE())
		closeBoth(t, ctx, client, server)
	})
}

// TestECEVendorIDTooWide: Dial refuses a vendor ID wider than its 24-bit field.
func TestECEVendorIDTooWide(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		as := twoAgents(t)
		_, err := as[0].Dial(ctx, serverAddr, &Options{ECE: cm.ECE{VendorID: 1 << 24}})
		require.ErrorIs(t, err, cm.ErrInvalidParam)
	})
}

// TestCheckECEVendor: with CheckECEVendor, Dial takes a REP without ECE or with its own vendor ID
// and refuses one naming another vendor, as librdmacm's rdma_connect does for an id with a QP: the
// server's Accept sees the REJ (consumer defined) and Dial fails with ErrECEVendor.
func TestCheckECEVendor(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ours     cm.ECE
		theirs   cm.ECE
		accepted bool
	}{
		{"no ECE back", cm.ECE{VendorID: 0x02c9a1, Options: 1}, cm.ECE{}, true},
		{"same vendor", cm.ECE{VendorID: 0x02c9a1, Options: 1}, cm.ECE{VendorID: 0x02c9a1, Options: 2}, true},
		{"other vendor", cm.ECE{}, cm.ECE{VendorID: 0x02c9a1, Options: 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := testCtx(t)
				as := twoAgents(t)
				l := serverListener(t, ctx, as[1], &Options{ECE: tc.theirs})
				accepted := make(chan error, 1)
				go func() {
					c, err := l.Accept(ctx)
					if err == nil {
						assert.NoError(t, c.Close())
						drain(t, ctx, c)
					}
					accepted <- err
				}()
				client, err := as[0].Dial(ctx, serverAddr, &Options{ECE: tc.ours, CheckECEVendor: true})
				if tc.accepted {
					require.NoError(t, err)
					assert.Equal(t, tc.theirs, client.RemoteECE())
					require.NoError(t, client.Close())
					drain(t, ctx, client)
					require.NoError(t, <-accepted)
					return
				}
				require.ErrorIs(t, err, ErrECEVendor)
				require.ErrorIs(t, <-accepted, &cm.RejectError{Reason: mad.RejConsumerDefined})
			})
		})
	}
}
