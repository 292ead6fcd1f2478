package trace

import (
	"bufio"
	_ "embed" // the page's style sheet and script
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

var (
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

// explanations holds the `gorxe dump -v` text of every packet as indices into a table of
// distinct lines: most lines (field meanings, fixed header values) repeat from packet to
// packet, so a capture of thousands of packets stays a page of a few megabytes.
type explanations struct {
	Lines  []string      `json:"lines"`
	Frames map[int][]int `json:"frames"`
}

func newExplanations(pkts []Packet) *explanations {
	e := &explanations{Frames: map[int][]int{}}
	index := map[string]int{}
	for i := range pkts {
		text := strings.TrimSuffix(pkts[i].Explain, "\n")
		if text == "" {
			continue
		}
		var ids []int
		for _, line := range strings.Split(text, "\n") {
			id, ok := index[line]
			if !ok {
				id = len(e.Lines)
				index[line] = id
				e.Lines = append(e.Lines, line)
			}
			ids = append(ids, id)
		}
		e.Frames[pkts[i].Frame] = ids
	}
	return e
}

// writeHTML writes a page that needs nothing else: the SVG inline, the explanations as JSON
// (encoding/json escapes <, > and &, so the data cannot close its script element), and the
// script and style sheet inline.
func writeHTML(w io.Writer, d *Diagram) error {
	bw := bufio.NewWriter(w)
	title := d.Title
	if title == "" {
		title = "capture"
	}
	fmt.Fprintf(bw, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>%s: gorxe trace</title>
<style>%s</style>
</head>
<body>
<header><b>%s</b>: %s. <span class="hint">Click an arrow for the packet's decoding (then j, k: next, previous); click a band to show its packets.</span></header>
<main id="diagram">
<div id="sticky-names">`, esc(title), pageCSS, esc(title), esc(d.Summary()))
	if err := writeNames(bw, d); err != nil {
		return err
	}
	fmt.Fprintf(bw, "</div>\n")
	if err := writeSVG(bw, d, true); err != nil {
		return err
	}
	fmt.Fprintf(bw, `</main>
<aside id="panel"><h2 id="panel-title">No packet selected</h2><pre id="explain"></pre></aside>
<script type="application/json" id="explanations">`)
	if err := json.NewEncoder(bw).Encode(newExplanations(d.Packets)); err != nil {
		return err
	}
	fmt.Fprintf(bw, "</script>\n<script>%s</script>\n</body>\n</html>\n", pageJS)
	return bw.Flush()
}
