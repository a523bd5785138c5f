package harness

import (
	"testing"
)

func TestDisplayURLDropsSecrets(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pass@api.example.com/v1":    "https://api.example.com/v1",
		"http://127.0.0.1:8080/v1?api-key=secret": "http://127.0.0.1:8080/v1?api-key=[redacted]",
		"http://127.0.0.1:8080/v1":                "http://127.0.0.1:8080/v1",
	} {
		if got := displayURL(in); got != want {
			t.Errorf("displayURL(%q) = %q, want %q", in, got, want)
		}
	}
}
