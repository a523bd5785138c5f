package redact

import "testing"

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pass@api.example.com/v1":                 "https://[redacted]@api.example.com/v1",
		"http://127.0.0.1:8080/v1?api-key=secret":              "http://127.0.0.1:8080/v1?api-key=[redacted]",
		"http://127.0.0.1:8080/v1?api-version=2024&key=s&flag": "http://127.0.0.1:8080/v1?api-version=[redacted]&key=[redacted]&flag=[redacted]",
		"http://127.0.0.1:8080/v1":                             "http://127.0.0.1:8080/v1",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}
