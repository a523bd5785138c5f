package clip

import (
	"strings"
	"testing"
)

func TestClip(t *testing.T) {
	long := strings.Repeat("é", 1<<20)
	tests := []struct{ in, str, quote string }{
		{"base", "base", `"base"`},
		{"a\nb", `a\nb`, `"a\nb"`},
		{long, strings.Repeat("é", MaxRunes) + "…", `"` + strings.Repeat("é", MaxRunes) + `"…`},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.str {
			t.Errorf("String(%.20q) = %.100q, want %.100q", tt.in, got, tt.str)
		}
		if got := Quote(tt.in); got != tt.quote {
			t.Errorf("Quote(%.20q) = %.100q, want %.100q", tt.in, got, tt.quote)
		}
	}
}

func TestCutAndArgs(t *testing.T) {
	long := strings.Repeat("a", 200)
	if got := Cut(long); got != strings.Repeat("a", MaxRunes)+"…" {
		t.Errorf("Cut = %q", got)
	}
	if got := Args([]any{long, 3, "b\n"}); got[0] != Cut(long) || got[1] != 3 || got[2] != "b\n" {
		t.Errorf("Args = %q", got)
	}
}
