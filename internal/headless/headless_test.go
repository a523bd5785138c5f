package headless

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A page's script runs, Eval reads what it computed, and its console
// messages and uncaught exceptions are all caught.
func TestBrowser(t *testing.T) {
	bin := Find()
	if bin == "" {
		t.Skip("no chromium binary (apt-get install chromium; .ci/run installs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b, err := Start(ctx, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	page := `data:text/html,<p id="x">1</p><script>document.getElementById("x").textContent = 6*7; console.error("boom"); undefinedThing();</script>`
	if err := b.Navigate(ctx, page); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := b.Eval(ctx, `document.getElementById("x").textContent`, &got); err != nil {
		t.Fatal(err)
	}
	if got != "42" {
		t.Errorf("the script's result = %q, want 42", got)
	}
	msgs := strings.Join(b.Console(), "\n")
	for _, want := range []string{"console.error: boom", "undefinedThing"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("console lacks %q:\n%s", want, msgs)
		}
	}
}
