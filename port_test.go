package gorxe

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gorxe/gorxe/internal/netdev"
)

// The port states kernel rxe reports over its netdev's link.
func TestPortOnLink(t *testing.T) {
	for _, tt := range []struct {
		name  string
		link  netdev.Link
		state PortState
		phys  uint8
	}{
		{"running", netdev.Link{Up: true, Running: true}, PortActive, physStateLinkUp},
		{"no carrier", netdev.Link{Up: true}, PortDown, physStatePolling},
		{"down", netdev.Link{}, PortDown, physStateDisabled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			state, phys := portOnLink(tt.link)
			assert.Equal(t, tt.state, state)
			assert.Equal(t, tt.phys, phys)
		})
	}
}
