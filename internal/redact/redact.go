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

// secretWords mark a name (a header, a query parameter) as holding a
// credential wherever they appear in it; secretNames only as the whole
// name, being too short to search for (Azure's SAS "sig", Azure
// Functions' "code").
var (
	secretWords = []string{"key", "token", "secret", "auth", "passw", "credential", "signature", "cookie", "session", "bearer", "jwt"}
	secretNames = []string{"sig", "code", "pwd", "pass", "sas"}
)

// LooksSecret reports whether name, a header or query parameter name,
// reads as holding a credential ("api-key", "X-Api-Key", "access_token",
// "X-Amz-Signature", "sig"). It judges the name only: a value is never
// looked at.
func LooksSecret(name string) bool {
	l := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	for _, w := range secretNames {
		if l == w {
			return true
		}
	}
	return false
}

// URLCredential names the first credential the URL u carries, for a
// message that must not show it: "user info" for http://user:pass@host,
// "query parameter api-key" for a query parameter LooksSecret; "" when
// it carries none (an unparsable URL carries none that can be named).
func URLCredential(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	if p.User != nil {
		return "user info"
	}
	for _, kv := range strings.Split(p.RawQuery, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if k, err := url.QueryUnescape(k); err == nil && LooksSecret(k) {
			return "query parameter " + k
		}
	}
	return ""
}
