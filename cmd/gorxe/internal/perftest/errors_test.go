package perftest

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/gorxe/gorxe"
)

func TestErrors(t *testing.T) {
	wc := gorxe.WC{WRID: 7, Status: gorxe.WCRemAccessErr, VendorErr: 0x11}
	err := wcError("client", &wc, 12, 4)
	want := "Completion with error at client: Failed status 10 (" + gorxe.WCRemAccessErr.String() + "): wr_id 7 syndrom 0x11, scnt=12, ccnt=4"
	assert.ErrorIs(t, err, ErrCompletion, "got %q, want %q", err, want)
	assert.Equal(t, want, err.Error(), "got %q, want %q", err, want)
	cause := gorxe.ErrQueueFull
	err = stepErr(cause, "Couldn't post send: scnt=%d", 3)
	assert.ErrorIs(t, err, gorxe.ErrQueueFull, "step error %q", err)
	assert.Equal(t, "Couldn't post send: scnt=3: "+cause.Error(), err.Error(), "step error %q", err)
}
