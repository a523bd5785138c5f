package runner

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
)

// endpoint is a target's base URL taken apart for building request URLs:
// the API base (…/v1), the server root (the base less a trailing /v1),
// where vLLM, llama.cpp, SGLang and Ollama serve their own endpoints, and
// the query that every request keeps (…/v1?api-key=K gives
// …/v1/chat/completions?api-key=K). User info is not part of it: it
// becomes an Authorization header (see parseEndpoint).
type endpoint struct {
	origin   string // scheme://host[:port]
	apiPath  string // the base URL's path, without a trailing slash
	rootPath string // apiPath less a trailing /v1
	query    string // the raw query, without '?'
}

// parseEndpoint parses a target's base URL. auth is the Authorization
// header value for user info in the URL (http://user:pass@host/v1):
// "Basic …", as curl sends it; "" when there is none.
func parseEndpoint(base string) (ep endpoint, auth string, err error) {
	u, err := url.Parse(base)
	if err != nil {
		return endpoint{}, "", fmt.Errorf("base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return endpoint{}, "", fmt.Errorf("base URL %s: want http:// or https:// and a host", DisplayURL(base))
	}
	if u.User != nil {
		pass, _ := u.User.Password()
		auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
	}
	ep.origin = u.Scheme + "://" + u.Host
	ep.apiPath = strings.TrimSuffix(u.EscapedPath(), "/")
	ep.rootPath = strings.TrimSuffix(ep.apiPath, "/v1")
	ep.query = u.RawQuery
	return ep, auth, nil
}

// api is the URL of path under the API base (path starts with '/').
func (e endpoint) api(path string) string { return e.join(e.apiPath + path) }

// root is the URL of path under the server root.
func (e endpoint) root(path string) string { return e.join(e.rootPath + path) }

func (e endpoint) join(path string) string {
	if e.query == "" {
		return e.origin + path
	}
	return e.origin + path + "?" + e.query
}

// DisplayURL is u for output and results: without user info, and with
// every query value replaced by [redacted] (either may hold a secret).
func DisplayURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable endpoint URL)"
	}
	p.User = nil
	if p.RawQuery != "" {
		var parts []string
		for _, kv := range strings.Split(p.RawQuery, "&") {
			k, _, _ := strings.Cut(kv, "=")
			parts = append(parts, k+"="+redacted)
		}
		p.RawQuery = strings.Join(parts, "&")
	}
	return p.String()
}
