package trace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// browser drives a headless Chromium over the DevTools protocol through --remote-debugging-pipe:
// JSON messages ending in a NUL byte, written to the browser's fd 3 and read from its fd 4. A
// pipe needs no port, no WebSocket and no library.
type browser struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      io.WriteCloser
	msgs    chan cdpMessage
	pending []cdpMessage // events read while waiting for a reply
	nextID  int
	session string
	ctx     context.Context
}

// cdpCommand is a message to the browser.
type cdpCommand struct {
	ID        int             `json:"id"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

// cdpMessage is a message from the browser: the reply to a command (ID set) or an event.
type cdpMessage struct {
	ID        int             `json:"id"`
	Method    string          `json:"method"`
	SessionID string          `json:"sessionId"`
	Result    json.RawMessage `json:"result"`
	Error     *cdpError       `json:"error"`
}

// The parameters of the commands the test sends.
type (
	createTargetParams struct {
		URL string `json:"url"`
	}
	attachParams struct {
		TargetID string `json:"targetId"`
		Flatten  bool   `json:"flatten"`
	}
	navigateParams struct {
		URL string `json:"url"`
	}
	evaluateParams struct {
		Expression    string `json:"expression"`
		ReturnByValue bool   `json:"returnByValue"`
		AwaitPromise  bool   `json:"awaitPromise"`
	}
	mouseParams struct {
		Type       string  `json:"type"`
		X          float64 `json:"x"`
		Y          float64 `json:"y"`
		Button     string  `json:"button"`
		ClickCount int     `json:"clickCount"`
	}
	keyParams struct {
		Type string `json:"type"`
		Key  string `json:"key"`
		Text string `json:"text,omitempty"`
	}
	screenshotParams struct {
		Format string `json:"format"`
	}
)

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// chromiumPath returns the Chromium binary, or skips the test where there is none.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed")
	return ""
}

// startBrowser starts Chromium headless with a fresh profile and opens one page, attached.
// ctx bounds every exchange, so a browser that hangs fails the test instead of stalling it.
func startBrowser(ctx context.Context, t *testing.T) *browser {
	t.Helper()
	toBrowser, browserIn, err := os.Pipe()
	require.NoError(t, err)
	browserOut, fromBrowser, err := os.Pipe()
	require.NoError(t, err)
	cmd := exec.Command(chromiumPath(t),
		"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-pipe", "--window-size=1400,1000", "about:blank")
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser} // fd 3 and fd 4 in the browser
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	toBrowser.Close()
	fromBrowser.Close()
	b := &browser{t: t, cmd: cmd, in: browserIn, msgs: make(chan cdpMessage), ctx: ctx}
	go b.readLoop(browserOut)
	t.Cleanup(func() {
		browserIn.Close() // Chromium exits when its pipe closes
		if err := cmd.Wait(); err != nil && t.Failed() {
			t.Logf("chromium: %v\n%s", err, stderr.String())
		}
	})

	var target struct {
		TargetID string `json:"targetId"`
	}
	b.call("Target.createTarget", createTargetParams{URL: "about:blank"}, &target)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	b.call("Target.attachToTarget", attachParams{TargetID: target.TargetID, Flatten: true}, &attached)
	b.session = attached.SessionID
	b.call("Page.enable", nil, nil)
	return b
}

// readLoop delivers the browser's messages until its pipe closes.
func (b *browser) readLoop(r io.Reader) {
	defer close(b.msgs)
	br := bufio.NewReader(r)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		select {
		case b.msgs <- m:
		case <-b.ctx.Done():
			return
		}
	}
}

// next returns the browser's next message.
func (b *browser) next() cdpMessage {
	b.t.Helper()
	select {
	case m, ok := <-b.msgs:
		require.True(b.t, ok, "chromium closed its DevTools pipe")
		return m
	case <-b.ctx.Done():
		require.Fail(b.t, fmt.Sprintf("chromium did not answer: %v", b.ctx.Err()))
	}
	return cdpMessage{}
}

// call sends a command (to the page once attached) with params, one of the parameter structs
// above or nil, and decodes its result into result, a pointer to a struct or nil.
func (b *browser) call(method string, params, result any) {
	b.t.Helper()
	b.nextID++
	id := b.nextID
	cmd := cdpCommand{ID: id, Method: method, SessionID: b.session}
	if params != nil {
		p, err := json.Marshal(params)
		require.NoError(b.t, err)
		cmd.Params = p
	}
	msg, err := json.Marshal(cmd)
	require.NoError(b.t, err)
	if _, err := b.in.Write(append(msg, 0)); err != nil {
		require.Fail(b.t, fmt.Sprintf("%s: %v", method, err))
	}
	for {
		m := b.next()
		if m.ID != id {
			if m.Method != "" {
				b.pending = append(b.pending, m)
			}
			continue
		}
		if m.Error != nil {
			require.Fail(b.t, fmt.Sprintf("%s: %d %s", method, m.Error.Code, m.Error.Message))
		}
		if result != nil {
			require.NoError(b.t, json.Unmarshal(m.Result, result), "%s", method)
		}
		return
	}
}

// waitEvent returns once the page has sent event method.
func (b *browser) waitEvent(method string) {
	b.t.Helper()
	for i, m := range b.pending {
		if m.Method == method && m.SessionID == b.session {
			b.pending = append(b.pending[:i], b.pending[i+1:]...)
			return
		}
	}
	for {
		if m := b.next(); m.Method == method && m.SessionID == b.session {
			return
		}
	}
}

// navigate loads url and returns when its load event has fired.
func (b *browser) navigate(url string) {
	b.t.Helper()
	b.pending = nil
	b.call("Page.navigate", navigateParams{URL: url}, nil)
	b.waitEvent("Page.loadEventFired")
}

// eval evaluates a JavaScript expression in the page and decodes its value into v; a promise
// is waited for.
func (b *browser) eval(expr string, v any) {
	b.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	b.call("Runtime.evaluate", evaluateParams{Expression: expr, ReturnByValue: true, AwaitPromise: true}, &r)
	if r.ExceptionDetails != nil {
		require.Fail(b.t, fmt.Sprintf("evaluating %q: %s", expr, r.ExceptionDetails.Text))
	}
	require.NoError(b.t, json.Unmarshal(r.Result.Value, v), "evaluating %q", expr)
}

// click presses and releases the left mouse button at (x, y) in the viewport, as a user does.
func (b *browser) click(x, y float64) {
	b.t.Helper()
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		b.call("Input.dispatchMouseEvent", mouseParams{Type: typ, X: x, Y: y, Button: "left", ClickCount: 1}, nil)
	}
}

// press types one character key, as a user does.
func (b *browser) press(key string) {
	b.t.Helper()
	b.call("Input.dispatchKeyEvent", keyParams{Type: "keyDown", Key: key, Text: key}, nil)
	b.call("Input.dispatchKeyEvent", keyParams{Type: "keyUp", Key: key}, nil)
}

// center scrolls the element selected by css into view and returns its centre.
func (b *browser) center(css string) (x, y float64) {
	b.t.Helper()
	var c struct{ X, Y float64 }
	sel, _ := json.Marshal(css)
	b.eval(fmt.Sprintf(`(function () {
		var e = document.querySelector(%s);
		if (!e) return null;
		e.scrollIntoView({block: "center"});
		var r = e.getBoundingClientRect();
		return {X: r.left + r.width / 2, Y: r.top + r.height / 2};
	})()`, sel), &c)
	return c.X, c.Y
}

// screenshot saves a PNG of the viewport to path.
func (b *browser) screenshot(path string) {
	b.t.Helper()
	var r struct {
		Data string `json:"data"`
	}
	b.call("Page.captureScreenshot", screenshotParams{Format: "png"}, &r)
	png, err := base64.StdEncoding.DecodeString(r.Data)
	require.NoError(b.t, err)
	require.NoError(b.t, os.WriteFile(path, png, 0o644))
}

// lockedBuffer collects the browser's stderr, written by exec's copying goroutine, for the
// log of a failed test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
