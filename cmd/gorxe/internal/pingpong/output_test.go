package pingpong

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPrintDest(t *testing.T) {
	var b bytes.Buffer
	d := Dest{QPN: 0x11, PSN: 0x5e6589, GID: clientGID}
	printDest(&b, "local address: ", d, false)
	printDest(&b, "local address: ", d, true)
	printDest(&b, "remote address:", Dest{LID: 1, QPN: 0xabcdef, PSN: 7}, false)
	want := "  local address:  LID 0x0000, QPN 0x000011, PSN 0x5e6589, GID ::ffff:10.99.0.3\n" +
		"  local address:  LID 0x0000, QPN 0x000011, PSN 0x5e6589: GID ::ffff:10.99.0.3\n" +
		"  remote address: LID 0x0001, QPN 0xabcdef, PSN 0x000007, GID ::\n"
	assert.Equal(t, want, b.String(), "got\n%s\nwant\n%s", b.String(), want)
}

func TestPrintSummary(t *testing.T) {
	var b bytes.Buffer
	printSummary(&b, 4096, 1000, 123456*time.Microsecond)
	want := "8192000 bytes in 0.12 seconds = 530.84 Mbit/sec\n" +
		"1000 iters in 0.12 seconds = 123.46 usec/iter\n"
	assert.Equal(t, want, b.String(), "got\n%s\nwant\n%s", b.String(), want)
	// The C tools hold the microseconds in a float: 2^24+1 is not representable.
	b.Reset()
	printSummary(&b, 1, 1, (1<<24+1)*time.Microsecond)
	want = "2 bytes in 16.78 seconds = 0.00 Mbit/sec\n1 iters in 16.78 seconds = 16777216.00 usec/iter\n"
	assert.Equal(t, want, b.String(), "got\n%s\nwant\n%s", b.String(), want)
}

func TestBadPages(t *testing.T) {
	const page = 4096
	for _, k := range []Kind{RC, SRQ} {
		b := make([]byte, 3*page+100)
		fillBuffer(b, k)
		markPages(b, page)
		bad := badPages(b, page, k)
		assert.Nil(t, bad, "%s: clean buffer has bad pages %v", k.Name(), bad)
		b[page+7]++
		b[3*page] = 0x55
		bad = badPages(b, page, k)
		assert.Equal(t, []int{1, 3}, bad, "%s: bad pages %v, want [1 3]", k.Name(), bad)
	}
	// A client without -c leaves the fill byte where the marker belongs.
	b := make([]byte, page)
	fillBuffer(b, RC)
	bad := badPages(b, page, RC)
	assert.Equal(t, []int{0}, bad, "unmarked buffer: %v", bad)
}
