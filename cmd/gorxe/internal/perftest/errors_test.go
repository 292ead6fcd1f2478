package perftest

import (
	"errors"
	"testing"

	"github.com/gorxe/gorxe"
)

func TestErrors(t *testing.T) {
	wc := gorxe.WC{WRID: 7, Status: gorxe.WCRemAccessErr, VendorErr: 0x11}
	err := wcError("client", &wc, 12, 4)
	want := "Completion with error at client: Failed status 10 (" + gorxe.WCRemAccessErr.String() + "): wr_id 7 syndrom 0x11, scnt=12, ccnt=4"
	if !errors.Is(err, ErrCompletion) || err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	cause := gorxe.ErrQueueFull
	err = stepErr(cause, "Couldn't post send: scnt=%d", 3)
	if !errors.Is(err, gorxe.ErrQueueFull) || err.Error() != "Couldn't post send: scnt=3: "+cause.Error() {
		t.Errorf("step error %q", err)
	}
}
