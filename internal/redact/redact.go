// Package redact is how a secret looks in sixpin's output: replaced by
// Marker. endpoint removes the target's secrets from the server's text
// with it; URL shows an endpoint's URL without the secrets it may carry.
package redact

import (
	"net/url"
	"strings"
)

// Marker replaces a secret in text that reaches output.
const Marker = "[redacted]"

// URL is u for output and results: its user info and every query value
// replaced by Marker (either may hold a secret), so that a reader sees
// that the URL carries them but not what they are.
func URL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable endpoint URL)"
	}
	user := p.User != nil
	p.User = nil
	if p.RawQuery != "" {
		var parts []string
		for _, kv := range strings.Split(p.RawQuery, "&") {
			k, _, _ := strings.Cut(kv, "=")
			parts = append(parts, k+"="+Marker)
		}
		p.RawQuery = strings.Join(parts, "&")
	}
	out := p.String()
	if scheme, rest, ok := strings.Cut(out, "://"); ok && user {
		out = scheme + "://" + Marker + "@" + rest
	}
	return out
}
