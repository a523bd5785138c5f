package endpoint

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/sixpin/sixpin/internal/redact"
)

// minSecretLen is the shortest value searched for: a shorter one would
// match ordinary words, and is no secret worth the name.
const minSecretLen = 6

// redactor removes the secret values a target holds — the API key, the
// profile's header values, user info and query values of the base URL —
// from text the server sent, wherever that text enters sixpin: error
// bodies and messages, the strings a stream's records keep, discovery
// answers, /tokenize errors. It matches values, not shapes (a key the
// server reflects in a model name is found as well as one in an error),
// in the forms they travel in: as given, URL-escaped, JSON-escaped, and
// user info also as the Basic credentials. A redactor is immutable and
// safe for concurrent use.
type redactor struct {
	secrets []string // longest first, so that a secret containing another goes whole
}

// newRedactor collects t's secrets; auth is the Authorization header made
// of the base URL's user info ("" for none).
func newRedactor(t Target, auth string) redactor {
	var vals []string
	vals = append(vals, t.APIKey)
	for _, v := range t.Headers {
		vals = append(vals, v)
	}
	if u, err := url.Parse(t.BaseURL); err == nil {
		if u.User != nil {
			pass, _ := u.User.Password()
			vals = append(vals, u.User.Username(), pass)
		}
		for _, vs := range u.Query() {
			vals = append(vals, vs...)
		}
	}
	if b64, ok := strings.CutPrefix(auth, "Basic "); ok {
		vals = append(vals, auth, b64)
	}
	var rd redactor
	for _, v := range vals {
		for _, form := range []string{v, url.QueryEscape(v), url.PathEscape(v), jsonEscaped(v)} {
			if len(form) >= minSecretLen && !slices.Contains(rd.secrets, form) {
				rd.secrets = append(rd.secrets, form)
			}
		}
	}
	slices.SortFunc(rd.secrets, func(a, b string) int { return len(b) - len(a) })
	return rd
}

// jsonEscaped is v as it appears inside a JSON string.
func jsonEscaped(v string) string {
	b, _ := json.Marshal(v)
	return string(b[1 : len(b)-1])
}

// String returns s with every secret replaced by [redacted].
func (rd redactor) String(s string) string {
	for _, sec := range rd.secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, redact.Marker)
		}
	}
	return s
}

// Bytes is String for a byte slice; it returns b itself when b holds no
// secret.
func (rd redactor) Bytes(b []byte) []byte {
	for _, sec := range rd.secrets {
		if bytes.Contains(b, []byte(sec)) {
			b = bytes.ReplaceAll(b, []byte(sec), []byte(redact.Marker))
		}
	}
	return b
}
