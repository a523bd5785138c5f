package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/results"
)

// doer is the go-openai HTTPClient hook: it adds the endpoint's request
// extensions (ignore_eos, min_tokens, a profile's extra_body) to the JSON
// body go-openai built, and the profile's headers, then sends the request
// on sixpin's own transport. go-openai itself is used unmodified.
type doer struct {
	client *http.Client
	// extra is `,"k":v,...` spliced before the body's closing brace.
	extra   []byte
	headers map[string]string
}

// exchange passes per-request facts between a request's goroutine and the
// doer: min_tokens in, the HTTP status out.
type exchange struct {
	minTokens int
	status    int
	// retryAfter and bucket are read from a 429's headers.
	retryAfter time.Duration
	bucket     string
}

type exchangeKey struct{}

func withExchange(ctx context.Context, x *exchange) context.Context {
	return context.WithValue(ctx, exchangeKey{}, x)
}

// newTransport returns the transport for one run: sized for the run's
// concurrency so connections are reused, never compressed (SSE must not
// be buffered by gzip), and with dial and TLS timeouts so a dead endpoint
// fails fast as a connect error.
func newTransport(conns int) *http.Transport {
	return &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   10 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: max(conns, 2),
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		DisableCompression:  true,
		// Buffers stay at the 4 KiB default: at 10,000 streams every KiB
		// per connection is 10 MB, and larger ones gain nothing measurable.
	}
}

// encodeExtra renders extra body members as `,"k":v` pairs in key order.
func encodeExtra(m map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		v, err := json.Marshal(m[k])
		if err != nil {
			return nil, fmt.Errorf("extra_body.%s: %w", k, err)
		}
		kb, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	return b.Bytes(), nil
}

// Do implements go-openai's HTTPDoer.
func (d *doer) Do(req *http.Request) (*http.Response, error) {
	for k, v := range d.headers {
		req.Header.Set(k, v)
	}
	x, _ := req.Context().Value(exchangeKey{}).(*exchange)
	minTokens := 0
	if x != nil {
		minTokens = x.minTokens
	}
	if req.Body != nil && (len(d.extra) > 0 || minTokens > 0) {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		end := bytes.LastIndexByte(body, '}')
		if end < 0 {
			return nil, fmt.Errorf("request body is not a JSON object")
		}
		out := make([]byte, 0, len(body)+len(d.extra)+32)
		out = append(out, body[:end]...)
		out = append(out, d.extra...)
		if minTokens > 0 {
			out = append(out, `,"min_tokens":`...)
			out = strconv.AppendInt(out, int64(minTokens), 10)
		}
		out = append(out, body[end:]...)
		req.Body = io.NopCloser(bytes.NewReader(out))
		req.ContentLength = int64(len(out))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	}
	resp, err := d.client.Do(req)
	if x != nil && resp != nil {
		x.status = resp.StatusCode
		if resp.StatusCode == http.StatusTooManyRequests {
			x.retryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
			x.bucket = bucketFromHeaders(resp.Header)
		}
	}
	return resp, err
}

// retryAfter parses a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// bucketFromHeaders names the exhausted limit from x-ratelimit-remaining-*
// headers (OpenAI's and Cerebras' styles), or "".
func bucketFromHeaders(h http.Header) string {
	for k, vs := range h {
		k = strings.ToLower(k)
		if !strings.HasPrefix(k, "x-ratelimit-remaining") || len(vs) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(vs[0]), 64); err != nil || v > 0 {
			continue
		}
		switch {
		case strings.Contains(k, "uncached"):
			return results.BucketUncachedTokens
		case strings.Contains(k, "output"):
			return results.BucketOutputTokens
		case strings.Contains(k, "tokens") && strings.Contains(k, "day"):
			return results.BucketTokensPerDay
		case strings.Contains(k, "tokens"):
			return results.BucketTokens
		case strings.Contains(k, "requests"):
			return results.BucketRequests
		}
	}
	return ""
}
