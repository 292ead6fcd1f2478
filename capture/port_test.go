package capture

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCommentPorts(t *testing.T) {
	for _, tc := range []struct {
		comment string
		want    []uint16
	}{
		{"", nil},
		{PortComment(5000), []uint16{5000}},
		{"captured in the lab\ngorxe udp-port=4792\n  gorxe udp-port=18515  \n", []uint16{4792, 18515}},
		{"gorxe udp-port=0\ngorxe udp-port=70000\ngorxe udp-port=x\nudp-port=5\n", nil},
	} {
		assert.Equal(t, tc.want, CommentPorts(tc.comment), "%q", tc.comment)
	}
	assert.Equal(t, "gorxe udp-port=5000", PortComment(5000))
}
