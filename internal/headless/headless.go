// Package headless finds and drives a headless Chromium for tests: the
// HTML report's and the live page's. It speaks the Chrome DevTools
// Protocol over the pipe Chromium opens with --remote-debugging-pipe
// (file descriptors 3 and 4, NUL-terminated JSON), so it needs no
// WebSocket library and no network port.
package headless

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Find returns the path of a Chromium or Chrome binary on PATH, or "".
func Find() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Flags are the command-line flags of a quiet, headless, throwaway
// browser whose profile lives in dir: no sandbox (CI containers), no GPU,
// no background traffic; a desktop's window (1,200 × 900).
func Flags(dir string) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--window-size=1200,900",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + filepath.Join(dir, "profile")}
}

// Browser is a headless Chromium with one page, driven over the DevTools
// pipe. Its methods are safe for concurrent use; Close ends it.
type Browser struct {
	cmd     *exec.Cmd
	w       io.WriteCloser // to the browser (its fd 3)
	session string

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan reply
	console []string
	loaded  chan struct{} // replaced by every Navigate
	done    chan struct{} // closed when the browser's pipe closes
}

type reply struct {
	Result json.RawMessage
	Err    error
}

// message is anything the browser sends: a reply (ID) or an event
// (Method).
type message struct {
	ID     int64           `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
	SessionID string `json:"sessionId"`
}

// Start launches bin headless with its profile in dir and opens one blank
// page. ctx bounds the browser's whole life: when it ends the browser is
// killed.
func Start(ctx context.Context, bin, dir string) (*Browser, error) {
	toBrowser, ourW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ourR, fromBrowser, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, append(Flags(dir), "--remote-debugging-pipe", "about:blank")...)
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	toBrowser.Close()
	fromBrowser.Close()
	b := &Browser{cmd: cmd, w: ourW, pending: map[int64]chan reply{}, loaded: make(chan struct{}), done: make(chan struct{})}
	go b.read(ourR)
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		b.Close()
		return nil, fmt.Errorf("open a page: %w", err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		b.Close()
		return nil, fmt.Errorf("attach to the page: %w", err)
	}
	b.session = att.SessionID
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable"} {
		if err := b.call(ctx, b.session, m, nil, nil); err != nil {
			b.Close()
			return nil, fmt.Errorf("%s: %w", m, err)
		}
	}
	return b, nil
}

// read dispatches what the browser sends until its pipe closes.
func (b *Browser) read(r io.ReadCloser) {
	defer close(b.done)
	defer r.Close()
	br := bufio.NewReader(r)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			for id, ch := range b.pending {
				ch <- reply{Err: errors.New("the browser closed its pipe")}
				delete(b.pending, id)
			}
			b.mu.Unlock()
			return
		}
		var m message
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if ch, ok := b.pending[m.ID]; ok && m.ID != 0 {
			delete(b.pending, m.ID)
			rp := reply{Result: m.Result}
			if m.Error != nil {
				rp.Err = errors.New(m.Error.Message)
			}
			ch <- rp
		} else if m.Method != "" {
			b.event(m)
		}
		b.mu.Unlock()
	}
}

// event records console messages, exceptions and log entries, and marks
// the page loaded. Called with b.mu held.
func (b *Browser) event(m message) {
	switch m.Method {
	case "Page.loadEventFired":
		select {
		case <-b.loaded:
		default:
			close(b.loaded)
		}
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		_ = json.Unmarshal(m.Params, &p)
		var parts []string
		for _, a := range p.Args {
			if a.Value != nil {
				parts = append(parts, fmt.Sprint(a.Value))
			} else {
				parts = append(parts, a.Description)
			}
		}
		b.console = append(b.console, "console."+p.Type+": "+strings.Join(parts, " "))
	case "Runtime.exceptionThrown":
		var p struct {
			Details struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		_ = json.Unmarshal(m.Params, &p)
		b.console = append(b.console, "exception: "+p.Details.Text+" "+p.Details.Exception.Description)
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level string `json:"level"`
				Text  string `json:"text"`
				URL   string `json:"url"`
			} `json:"entry"`
		}
		_ = json.Unmarshal(m.Params, &p)
		b.console = append(b.console, "log."+p.Entry.Level+": "+p.Entry.Text+" "+p.Entry.URL)
	}
}

// call sends method with params (in session, "" for the browser) and
// decodes its result into out (nil: ignored).
func (b *Browser) call(ctx context.Context, session, method string, params, out any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan reply, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	b.mu.Lock()
	_, err = b.w.Write(append(raw, 0))
	b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case rp := <-ch:
		if rp.Err != nil {
			return fmt.Errorf("%s: %w", method, rp.Err)
		}
		if out != nil {
			return json.Unmarshal(rp.Result, out)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Navigate loads url in the page and waits for its load event.
func (b *Browser) Navigate(ctx context.Context, url string) error {
	loaded := make(chan struct{})
	b.mu.Lock()
	b.loaded = loaded
	b.mu.Unlock()
	var res struct {
		ErrorText string `json:"errorText"`
	}
	if err := b.call(ctx, b.session, "Page.navigate", map[string]any{"url": url}, &res); err != nil {
		return err
	}
	if res.ErrorText != "" {
		return fmt.Errorf("navigate to %s: %s", url, res.ErrorText)
	}
	select {
	case <-loaded:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("navigate to %s: no load event: %w", url, ctx.Err())
	}
}

// Eval evaluates a JavaScript expression in the page (awaiting a promise)
// and decodes its value, as JSON, into out.
func (b *Browser) Eval(ctx context.Context, expr string, out any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := b.call(ctx, b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &res); err != nil {
		return err
	}
	if res.Exception != nil {
		return fmt.Errorf("evaluate %q: %s", expr, res.Exception.Text)
	}
	if out == nil || len(res.Result.Value) == 0 {
		return nil
	}
	return json.Unmarshal(res.Result.Value, out)
}

// Screenshot captures the whole page as laid out (not only the
// viewport), as PNG bytes.
func (b *Browser) Screenshot(ctx context.Context) ([]byte, error) {
	var size struct{ W, H float64 }
	if err := b.Eval(ctx, "({W: document.documentElement.scrollWidth, H: document.documentElement.scrollHeight})", &size); err != nil {
		return nil, err
	}
	var res struct {
		Data []byte `json:"data"` // base64 in JSON: decoded by encoding/json
	}
	clip := map[string]any{"x": 0, "y": 0, "width": size.W, "height": size.H, "scale": 1}
	err := b.call(ctx, b.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true, "clip": clip}, &res)
	if err != nil {
		return nil, err
	}
	return res.Data, nil
}

// Console returns the console messages, uncaught exceptions and log
// entries (failed loads among them) the page has produced so far.
func (b *Browser) Console() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.console...)
}

// closeWait bounds how long Close waits for the browser to quit before
// it kills it.
const closeWait = 10 * time.Second

// Close ends the browser and waits for it.
func (b *Browser) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	_ = b.call(ctx, "", "Browser.close", nil, nil)
	b.w.Close()
	select {
	case <-b.done:
	case <-ctx.Done():
		_ = b.cmd.Process.Kill()
	}
	_ = b.cmd.Wait()
}
