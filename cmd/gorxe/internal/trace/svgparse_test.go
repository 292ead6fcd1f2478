package trace

import (
	"bytes"
	"encoding/xml"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// goldenCapture is real kernel rxe traffic: RC, UC and UD pingpongs, perftest WRITE, READ,
// SEND and fetch-add runs, and an RDMA-CM exchange; 2540 RoCEv2 packets.
const goldenCapture = "testdata/kernel-rxe-rc-uc-ud.pcapng"

// node is any XML element, for walking the SVG as a reader of the file would.
type node struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []node     `xml:",any"`
	Text    string     `xml:",chardata"`
}

func (n *node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// hasClass reports whether n's class attribute lists c.
func (n *node) hasClass(c string) bool {
	for _, f := range strings.Fields(n.attr("class")) {
		if f == c {
			return true
		}
	}
	return false
}

// find returns the elements under n (n included), depth first, for which match is true.
func (n *node) find(match func(*node) bool) []*node {
	var out []*node
	if match(n) {
		out = append(out, n)
	}
	for i := range n.Nodes {
		out = append(out, n.Nodes[i].find(match)...)
	}
	return out
}

// label returns the text of n's first descendant with class "label".
func (n *node) label() string {
	for _, l := range n.find(func(m *node) bool { return m.XMLName.Local == "text" && m.hasClass("label") }) {
		return l.Text
	}
	return ""
}

// parsedSVG is what a test reads back from the SVG.
type parsedSVG struct {
	root  node
	rows  []string          // per row: "kind: label", kind one of pkt, band, loss, gap
	pkts  map[int]*node     // packet arrows by frame
	class map[int]string    // packet arrows' class attribute by frame
	lanes []string          // lane names, "address QP n"
	attrs map[string]string // attributes of the root element
}

// parseSVG parses an SVG with encoding/xml, failing the test if it is not well-formed.
func parseSVG(t *testing.T, b []byte) *parsedSVG {
	t.Helper()
	p := &parsedSVG{pkts: map[int]*node{}, class: map[int]string{}, attrs: map[string]string{}}
	dec := xml.NewDecoder(bytes.NewReader(b))
	require.NoError(t, dec.Decode(&p.root))
	require.Equal(t, "svg", p.root.XMLName.Local)
	require.Equal(t, "http://www.w3.org/2000/svg", p.root.XMLName.Space)
	for _, a := range p.root.Attrs {
		p.attrs[a.Name.Local] = a.Value
	}
	for _, row := range p.root.find(func(n *node) bool { return n.XMLName.Local == "g" && n.hasClass("row") }) {
		for _, kind := range []string{"pkt", "band", "loss", "gap"} {
			if g := row.find(func(n *node) bool { return n.XMLName.Local == "g" && n.hasClass(kind) }); len(g) > 0 {
				p.rows = append(p.rows, kind+": "+g[0].label())
				break
			}
		}
	}
	for _, g := range p.root.find(func(n *node) bool { return n.XMLName.Local == "g" && n.hasClass("pkt") }) {
		f, err := strconv.Atoi(g.attr("data-frame"))
		require.NoError(t, err)
		p.pkts[f], p.class[f] = g, g.attr("class")
	}
	names := p.root.find(func(n *node) bool { return n.hasClass("lane-name") })
	for i := 1; i+1 < len(names); i += 2 { // the first is the time column's heading
		p.lanes = append(p.lanes, names[i].Text+" "+names[i+1].Text)
	}
	return p
}

// count returns how many elements of the SVG are a name element with class c.
func (p *parsedSVG) count(name, c string) int {
	return len(p.root.find(func(n *node) bool { return n.XMLName.Local == name && n.hasClass(c) }))
}

// buildFile builds the diagram of a capture file.
func buildFile(t *testing.T, name string, o Options, explain bool) *Diagram {
	t.Helper()
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	d, err := Build(f, o, explain)
	require.NoError(t, err)
	return d
}

// defaults returns the options of a plain `gorxe trace FILE`.
func defaults() Options { return Options{Gap: DefaultGap, Collapse: DefaultCollapse} }

// svgOf draws d as SVG and parses it back.
func svgOf(t *testing.T, d *Diagram) *parsedSVG {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, Write(&b, d, FormatSVG))
	return parseSVG(t, b.Bytes())
}

// openGolden opens the kernel capture, closed when the test ends.
func openGolden(t *testing.T) (*os.File, error) {
	t.Helper()
	f, err := os.Open(goldenCapture)
	if err == nil {
		t.Cleanup(func() { f.Close() })
	}
	return f, err
}
