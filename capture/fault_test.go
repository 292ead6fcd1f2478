package capture

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gorxe/gorxe/netio"
)

// TestFault reads back every direction the writer comments on, and nothing from the comments a
// capture made elsewhere may carry.
func TestFault(t *testing.T) {
	for _, d := range []netio.Direction{
		netio.Lost,
		netio.Duplicate, netio.Corrupt, netio.Delayed,
		netio.Duplicate | netio.Corrupt, netio.Corrupt | netio.Delayed,
		netio.Duplicate | netio.Corrupt | netio.Delayed,
	} {
		c := comment(d)
		assert.NotEmpty(t, c, "%v", d)
		assert.Equal(t, d, Fault([]string{"captured in the lab", c}), "%q", c)
	}
	assert.Equal(t, "gorxe: sent (duplicate, corrupted)", comment(netio.Duplicate|netio.Corrupt))
	assert.Equal(t, netio.Lost, Fault([]string{LostComment}))
	assert.Equal(t, netio.Lost, Fault([]string{comment(netio.Lost | netio.Delayed)}), "a lost datagram's marks are not recorded")
	for _, none := range [][]string{nil, {}, {""}, {"gorxe: sent"}, {"gorxe: received"}, {"lost"}, {"gorxe: sent (copied)"}} {
		assert.Equal(t, netio.Sent, Fault(none), "%q", none)
	}
}
