package endpoint

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"

	"github.com/sixpin/sixpin/internal/redact"
)

// baseURL is a target's base URL taken apart for building request URLs:
// the API base (…/v1), the server root (the base less a trailing /v1),
// where vLLM, llama.cpp, SGLang and Ollama serve their own endpoints, and
// the query that every request keeps (…/v1?api-key=K gives
// …/v1/chat/completions?api-key=K). User info is not part of it: it
// becomes an Authorization header (see parseBaseURL).
type baseURL struct {
	origin   string // scheme://host[:port]
	apiPath  string // the base URL's path, without a trailing slash
	rootPath string // apiPath less a trailing /v1
	query    string // the raw query, without '?'
}

// parseBaseURL parses a target's base URL. auth is the Authorization
// header value for user info in the URL (http://user:pass@host/v1):
// "Basic …", as curl sends it; "" when there is none.
func parseBaseURL(base string) (ep baseURL, auth string, err error) {
	u, err := url.Parse(base)
	if err != nil {
		return baseURL{}, "", fmt.Errorf("base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return baseURL{}, "", fmt.Errorf("base URL %s: want http:// or https:// and a host", redact.URL(base))
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
func (e baseURL) api(path string) string { return e.join(e.apiPath + path) }

// root is the URL of path under the server root.
func (e baseURL) root(path string) string { return e.join(e.rootPath + path) }

func (e baseURL) join(path string) string {
	if e.query == "" {
		return e.origin + path
	}
	return e.origin + path + "?" + e.query
}
