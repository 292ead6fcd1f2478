package trace

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// between returns the text of s between the first start and the next end after it.
func between(t *testing.T, s, start, end string) string {
	t.Helper()
	i := strings.Index(s, start)
	require.GreaterOrEqual(t, i, 0, "no %q", start)
	rest := s[i:]
	j := strings.Index(rest, end)
	require.GreaterOrEqual(t, j, 0, "no %q after %q", end, start)
	return rest[:j+len(end)]
}

// TestHTMLSelfContained checks that the page of the kernel capture loads nothing from
// elsewhere, that its ladder holds every packet's arrow (those of bands hidden inside them),
// and that the explanation table rebuilds each packet's `dump -v` text exactly.
func TestHTMLSelfContained(t *testing.T) {
	d := buildFile(t, goldenCapture, defaults(), true)
	var b bytes.Buffer
	require.NoError(t, Write(&b, d, FormatHTML))
	page := b.String()

	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)\s(src|href)\s*=`),
		regexp.MustCompile(`(?i)<link|@import|<iframe|<img`),
		regexp.MustCompile(`(?i)url\((?:[^#)]|$)`), // url(#marker) refers inside the page
	} {
		assert.Empty(t, bad.FindAllString(page, 3), "%v", bad)
	}
	assert.Equal(t, 2, strings.Count(page, "http"), "the only addresses are the two SVGs' namespace")
	assert.Equal(t, 2, strings.Count(page, `xmlns="http://www.w3.org/2000/svg"`))

	ladder := parseSVG(t, []byte(between(t, page, `<svg xmlns="http://www.w3.org/2000/svg" id="ladder"`, "</svg>")))
	assert.Len(t, ladder.pkts, 2540, "every packet has an arrow")
	assert.Equal(t, 26, ladder.count("g", "members"))
	names := parseSVG(t, []byte(between(t, page, `<svg xmlns="http://www.w3.org/2000/svg" id="names"`, "</svg>")))
	assert.Len(t, names.lanes, 52)

	data := strings.TrimSuffix(strings.TrimPrefix(
		between(t, page, `<script type="application/json" id="explanations">`, "</script>"),
		`<script type="application/json" id="explanations">`), "</script>")
	var e explanations
	require.NoError(t, json.Unmarshal([]byte(data), &e))
	require.Len(t, e.Frames, 2540)
	for _, frame := range []int{1, 5, 129, 1512, 2540} {
		var lines []string
		for _, i := range e.Frames[frame] {
			lines = append(lines, e.Lines[i])
		}
		assert.Equal(t, verboseDump(t, goldenCapture, frame), strings.Join(lines, "\n"), "frame %d", frame)
	}
	assert.Less(t, len(e.Lines), 2540*10, "lines shared between packets are stored once")
}
