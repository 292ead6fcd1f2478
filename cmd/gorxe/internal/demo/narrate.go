package demo

import (
	"fmt"
	"net/netip"
	"strconv"
	"sync"

	"github.com/gorxe/gorxe/netio"
)

// narrator turns the datagrams both devices hand to the network into one-line summaries for the
// step that caused them, and passes them on to the run's captures. Each device's tap shows its
// datagrams in the order the network gets them, losses in their place, so the narration keeps
// every sender's wire order; the lock interleaves the two senders as their taps ran.
type narrator struct {
	mu      sync.Mutex
	frames  int // datagrams numbered: the frame numbers of the run's capture
	lines   []string
	names   map[netip.Addr]string // address -> "A" or "B"
	resends *resends
	rec     *recording     // numbers the frames: a datagram it leaves out is shown as frame "-"
	watch   func(*summary) // when set, shown every decoded packet (under the lock)
}

func newNarrator(mtu int, rec *recording) *narrator {
	return &narrator{names: map[netip.Addr]string{}, resends: newResends(mtu), rec: rec}
}

// tap is the netio.TapFunc of both devices. What a device receives is left out: the same
// datagram was narrated, and recorded, when its sender handed it to the network.
func (n *narrator) tap(dir netio.Direction, m *netio.Message) {
	if dir.Base() == netio.Received {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.rec.record(dir, m)
	frame := "-"
	if n.rec.records(dir) {
		n.frames++
		frame = strconv.Itoa(n.frames)
	}
	who := fmt.Sprintf("%s→%s  ", n.names[m.Src.Addr().Unmap()], n.names[m.Dst.Addr().Unmap()])
	s, err := summarize(frame, m)
	if err != nil {
		line := who + err.Error()
		if dir.Has(netio.Corrupt) {
			line += "  " + noteCorrupted
		}
		n.lines = append(n.lines, line)
		return
	}
	if n.watch != nil {
		n.watch(&s)
	}
	line := who + s.line
	for _, note := range n.resends.note(m.Src, &s, dir) {
		line += "  " + note
	}
	n.lines = append(n.lines, line)
}

// take returns the summaries collected since the last call.
func (n *narrator) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := n.lines
	n.lines = nil
	return l
}
