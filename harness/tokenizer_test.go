package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bare path to a tokenizer file works as hf:PATH; an unknown name's
// error lists every valid choice, server included.
func TestTokenizerName(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{"qwen2", "qwen2"},
		{"server", "server"},
		{"hf:" + path, "hf:" + path},
		{path, "hf:" + path},
	} {
		if got, err := tokenizerName(c.in); err != nil || got != c.want {
			t.Errorf("tokenizerName(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"gpt9", filepath.Join(t.TempDir(), "missing.json"), t.TempDir()} {
		_, err := tokenizerName(bad)
		if err == nil || !strings.Contains(err.Error(), "server") || !strings.Contains(err.Error(), "qwen2") || !strings.Contains(err.Error(), "hf:PATH") {
			t.Errorf("tokenizerName(%q): %v, want the valid names, server among them", bad, err)
		}
	}
}
