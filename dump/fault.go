package dump

import (
	"strings"

	"github.com/gorxe/gorxe/netio"
)

// faultNotes are the words dump uses for what gorxe's fault injection did to a packet, each
// with what it means for a reader of -v.
var faultNotes = [...]struct {
	dir         netio.Direction
	word, means string
}{
	{netio.Lost, "dropped", "never reached the network: the capture keeps it where it was sent"},
	{netio.Duplicate, "duplicated", "an extra copy of the packet before it"},
	{netio.Corrupt, "corrupted", "one bit flipped on its way to the network"},
	{netio.Delayed, "delayed", "held back by a delay or reordering, and sent late"},
}

// Faults names what gorxe's fault injection did to p, as the capture's packet comment records
// it: "dropped", or any of "duplicated", "corrupted" and "delayed"; nil when it did nothing.
func (p *Packet) Faults() []string {
	var words []string
	for _, n := range faultNotes {
		if p.has(n.dir) {
			words = append(words, n.word)
		}
	}
	return words
}

func (p *Packet) has(d netio.Direction) bool {
	if d == netio.Lost {
		return p.Fault.Base() == netio.Lost
	}
	return p.Fault.Base() == netio.Sent && p.Fault.Has(d)
}

// faultMarker is the end of p's summary line when fault injection touched it:
// " [dropped by fault injector]", " [duplicated, delayed by fault injector]"; "" otherwise.
func (p *Packet) faultMarker() string {
	words := p.Faults()
	if words == nil {
		return ""
	}
	return " [" + strings.Join(words, ", ") + " by fault injector]"
}

// fault writes the section of a verbose dump that says what fault injection did to p.
func (v *verbose) fault(p *Packet) {
	if p.Faults() == nil {
		return
	}
	v.printf("  Fault injection: what gorxe's fault injector did to this packet (the capture's packet comment)\n")
	for _, n := range faultNotes {
		if p.has(n.dir) {
			v.field(n.word, "yes", "%s", n.means)
		}
	}
}
