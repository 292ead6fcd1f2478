package trace

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe/dump"
)

// artifactsEnv names a directory where the end-to-end test leaves its page and screenshots;
// without it they go to the test's temporary directory and are removed.
const artifactsEnv = "GORXE_TRACE_ARTIFACTS"

func artifactDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(artifactsEnv)
	if dir == "" {
		return t.TempDir()
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// verboseDump returns `gorxe dump -v`'s text for one frame of a capture whose frames are all
// RoCE, straight from the dump package. The capture is dumped once per test binary: the golden
// capture's verbose text is megabytes, and the tests look up several frames of it.
func verboseDump(t *testing.T, name string, frame int) string {
	t.Helper()
	verboseDumps.Lock()
	defer verboseDumps.Unlock()
	blocks, ok := verboseDumps.m[name]
	if !ok {
		f, err := os.Open(name)
		require.NoError(t, err)
		defer f.Close()
		var out bytes.Buffer
		_, err = dump.Run(&out, &bytes.Buffer{}, f, dump.FormatVerbose)
		require.NoError(t, err)
		blocks = strings.Split(out.String(), "\n\n")
		verboseDumps.m[name] = blocks
	}
	require.Greater(t, len(blocks), frame-1)
	return strings.TrimSuffix(blocks[frame-1], "\n")
}

// verboseDumps holds the verbose dump of each capture verboseDump has read, split per packet.
var verboseDumps = struct {
	sync.Mutex
	m map[string][]string
}{m: map[string][]string{}}

// TestHTMLInChromium loads the page of the kernel capture in headless Chromium and uses it
// as a reader would: a click on the retransmitted SEND_FIRST (frame 129) shows its decoding,
// j and k step to the packets around it, a click on the first band opens it and moves the rows below, and a click on a packet of the
// opened band shows that packet. Screenshots of both states are kept.
func TestHTMLInChromium(t *testing.T) {
	chromiumPath(t)
	dir := artifactDir(t)
	page := filepath.Join(dir, "trace.html")
	d := buildFile(t, goldenCapture, defaults(), true)
	var html bytes.Buffer
	require.NoError(t, Write(&html, d, FormatHTML))
	require.NoError(t, os.WriteFile(page, html.Bytes(), 0o644))

	// A bound on the whole conversation, so a browser that hangs fails the test; no step
	// waits on the clock.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b := startBrowser(ctx, t)
	b.navigate("file://" + page)

	type panel struct{ Title, Text string }
	read := func() panel {
		var p panel
		b.eval(`({Title: document.getElementById("panel-title").textContent,
			Text: document.getElementById("explain").textContent})`, &p)
		return p
	}
	require.Equal(t, panel{Title: "No packet selected"}, read())

	b.click(b.center(`g.pkt[data-frame="129"] line.arrow`))
	got := read()
	assert.Equal(t, "Frame 129", got.Title)
	assert.Equal(t, verboseDump(t, goldenCapture, 129), got.Text)
	assert.True(t, strings.HasPrefix(got.Text, "#129 10.99.0.2:49441 > 10.99.0.3:4791 RC_SEND_FIRST dqpn=0x000011 psn=6146219"), got.Text)
	var selected []string
	b.eval(`Array.from(document.querySelectorAll("g.pkt.selected")).map(g => g.getAttribute("data-frame"))`, &selected)
	assert.Equal(t, []string{"129"}, selected)
	b.screenshot(filepath.Join(dir, "trace-packet.png"))

	b.press("j")
	assert.Equal(t, "Frame 130", read().Title)
	b.press("k")
	b.press("k")
	assert.Equal(t, "Frame 128", read().Title)

	// Scrolled far to the right, the time column is still at the left of the view: the scroll
	// event is handled before the second frame after it.
	var timeLeft struct{ Before, After, View float64 }
	b.eval(`new Promise(function (done) {
		var main = document.getElementById("diagram"), t = document.querySelector("g.pkt.selected").closest("g.row").querySelector("text.t");
		var before = t.getBoundingClientRect().left;
		main.scrollLeft = 3000;
		requestAnimationFrame(function () { requestAnimationFrame(function () {
			done({Before: before, After: t.getBoundingClientRect().left, View: main.getBoundingClientRect().left});
		}); });
	})`, &timeLeft)
	assert.InDelta(t, timeLeft.Before, timeLeft.After, 1, "time label moved with the scroll")
	assert.GreaterOrEqual(t, timeLeft.After, timeLeft.View)

	// The first band: its packets hidden, then shown, and the next row moved down by them.
	type bandState struct {
		Display   string
		Count     int
		NextY     float64
		NextMoved float64
	}
	state := func() bandState {
		var s bandState
		b.eval(`(function () {
			var band = document.querySelector("g.band"), row = band.closest("g.row"), next = row.nextElementSibling;
			return {Display: row.querySelector("g.members").getAttribute("display"),
				Count: Number(band.getAttribute("data-count")),
				NextY: Number(next.getAttribute("data-y")),
				NextMoved: next.transform.baseVal.getItem(0).matrix.f};
		})()`, &s)
		return s
	}
	before := state()
	require.Equal(t, "none", before.Display)
	require.Equal(t, before.NextY, before.NextMoved)
	b.click(b.center(`g.band rect`))
	after := state()
	assert.Equal(t, "inline", after.Display)
	assert.Equal(t, before.NextY+packetH*float64(before.Count), after.NextMoved)

	var member string
	b.eval(`document.querySelector("g.row.open g.members g.pkt").getAttribute("data-frame")`, &member)
	b.click(b.center(`g.row.open g.members g.pkt[data-frame="` + member + `"] line.arrow`))
	got = read()
	assert.Equal(t, "Frame "+member, got.Title)
	assert.Contains(t, got.Text, "_MIDDLE")
	b.screenshot(filepath.Join(dir, "trace-band.png"))
	t.Logf("page and screenshots in %s", dir)
}
