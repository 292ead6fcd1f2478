package soak

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gorxe/gorxe"
)

// result is what the server reports when the client is done.
type result struct {
	Recvs, Bad uint64
	Err        string
}

// serverMain is the second process: it serves RDMA WRITE, READ and atomics on its slots and
// checks every SEND it receives.
func serverMain() int {
	in := bufio.NewReader(os.Stdin)
	var h hello
	if err := recv(in, &h); err != nil {
		fmt.Fprintln(os.Stderr, "server: hello:", err)
		return 1
	}
	res := serve(in, h)
	if err := send(os.Stdout, res); err != nil {
		return 1
	}
	return 0
}

func serve(in *bufio.Reader, h hello) result {
	n := len(h.QPNs)
	recvBase := n * slotSize
	s, err := openSide(serverAddr, h.Port, n, recvBase+n*recvDepth*sendSize)
	if err != nil {
		return result{Err: err.Error()}
	}
	defer s.dev.Close()
	post := func(id uint64) error {
		q := s.qps[id/recvDepth]
		return q.PostRecv([]gorxe.RecvWR{{ID: id, SGList: s.sge(recvBase+int(id)*sendSize, sendSize)}})
	}
	if err := s.connect(h.QPNs, clientAddr, h.Timeout); err != nil {
		return result{Err: err.Error()}
	}
	for id := range uint64(n * recvDepth) {
		if err := post(id); err != nil {
			return result{Err: err.Error()}
		}
	}
	if err := send(os.Stdout, hello{QPNs: s.qpns(), Addr: s.mr.Addr(), RKey: s.mr.RKey()}); err != nil {
		return result{Err: err.Error()}
	}
	// The client closes stdin once every SEND it posted has completed.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		in.WriteTo(discard{})
		cancel()
	}()
	var res result
	want := make([]byte, sendSize)
	wcs := make([]gorxe.WC, 64)
	handle := func(wcs []gorxe.WC) error {
		for _, wc := range wcs {
			if wc.Status != gorxe.WCSuccess {
				return fmt.Errorf("receive %d: %v", wc.WRID, wc.Status)
			}
			res.Recvs++
			got := s.buf[recvBase+int(wc.WRID)*sendSize:][:sendSize]
			seq := binary.LittleEndian.Uint64(got)
			fill(want[8:], seq)
			binary.LittleEndian.PutUint64(want, seq)
			if wc.ByteLen != sendSize || string(got) != string(want) {
				res.Bad++
			}
			if err := post(wc.WRID); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		k, err := s.poll(ctx, wcs, time.Hour)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				break
			}
			res.Err = err.Error()
			return res
		}
		if err := handle(wcs[:k]); err != nil {
			res.Err = err.Error()
			return res
		}
	}
	for k := s.cq.Poll(wcs); k > 0; k = s.cq.Poll(wcs) {
		if err := handle(wcs[:k]); err != nil {
			res.Err = err.Error()
			return res
		}
	}
	return res
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
