package report

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/headless"
)

// chromium starts a headless Chromium for t (skipping t without one),
// with its profile and pages in the returned directory; it ends with t.
func chromium(t *testing.T) (*headless.Browser, context.Context, string) {
	t.Helper()
	bin := headless.Find()
	if bin == "" {
		t.Skip("no chromium binary (apt-get install chromium; .ci/run installs it)")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	b, err := headless.Start(ctx, bin, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b, ctx, dir
}

// saveScreenshot saves the page b shows as name in SIXPIN_SCREENSHOTS,
// when that is set, for a person to look at.
func saveScreenshot(t *testing.T, ctx context.Context, b *headless.Browser, name string) {
	t.Helper()
	dir := os.Getenv("SIXPIN_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := b.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
