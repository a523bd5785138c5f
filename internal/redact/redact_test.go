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

func TestURLCredential(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pass@api.example.com/v1":                       "user info",
		"http://h.svc:8000/v1?api-key=K":                             "query parameter api-key",
		"http://h.svc:8000/v1?api-version=2024-06-01&access_token=K": "query parameter access_token",
		"http://h.svc:8000/v1?X-Amz-Signature=K":                     "query parameter X-Amz-Signature",
		"http://h.svc:8000/v1?sig=K":                                 "query parameter sig",
		"http://h.svc:8000/v1?code=K":                                "query parameter code",
		"http://h.svc:8000/v1?api%2Dkey=K":                           "query parameter api-key",
		"http://h.svc:8000/v1?api-version=2024-06-01":                "",
		"http://h.svc:8000/v1":                                       "",
	} {
		if got := URLCredential(in); got != want {
			t.Errorf("URLCredential(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLooksSecret(t *testing.T) {
	for _, name := range []string{"Authorization", "X-Api-Key", "api_key", "Cookie", "X-Auth-Token", "client_secret", "password", "sig"} {
		if !LooksSecret(name) {
			t.Errorf("LooksSecret(%q) = false", name)
		}
	}
	for _, name := range []string{"X-Org", "api-version", "User-Agent", "design", "model"} {
		if LooksSecret(name) {
			t.Errorf("LooksSecret(%q) = true", name)
		}
	}
}
