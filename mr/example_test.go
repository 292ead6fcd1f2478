package mr_test

import (
	"fmt"

	"github.com/gorxe/gorxe/mr"
)

// The responder side of an RDMA WRITE split into packets: one lookup per packet, then a SEND's
// payload scattered into a receive SGE list with a cursor kept for the whole message.
func Example() {
	t := mr.NewTable()
	pd, _ := t.AllocPD()
	target := make([]byte, 64)
	region, _ := t.RegMR(pd, target, mr.AccessLocalWrite|mr.AccessRemoteWrite)

	rkey, va := region.RKey(), region.IOVA() // from the RETH of the first packet
	for _, payload := range [][]byte{[]byte("hello, "), []byte("world")} {
		span, err := t.LookupRemote(rkey, pd, 17, mr.AccessRemoteWrite, va, uint64(len(payload)))
		if err != nil {
			fmt.Println("NAK:", err)
			return
		}
		span.CopyIn(0, payload)
		span.Release()
		va += uint64(len(payload))
	}
	fmt.Println(string(target[:12]))

	recv := make([]byte, 8)
	rmr, _ := t.RegMR(pd, recv, mr.AccessLocalWrite)
	sges := []mr.SGE{
		{Addr: rmr.IOVA(), Length: 3, LKey: rmr.LKey()},
		{Addr: rmr.IOVA() + 4, Length: 4, LKey: rmr.LKey()},
	}
	var c mr.Cursor
	c.Reset(sges)
	for _, payload := range [][]byte{[]byte("abcd"), []byte("efg")} {
		if err := t.Scatter(&c, pd, payload); err != nil {
			fmt.Println("local error:", err)
			return
		}
	}
	fmt.Printf("%q\n", recv)

	_, err := t.LookupRemote(rkey+1, pd, 17, mr.AccessRemoteWrite, region.IOVA(), 1)
	fmt.Println(err)
	// Output:
	// hello, world
	// "abc\x00defg"
	// key does not exist or is stale
}
