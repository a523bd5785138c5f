package endpoint

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
)

// TestRetryHint: the wait a server asks for, from its Retry-After
// (seconds, fractional seconds or an HTTP date), retry-after-ms (which
// the OpenAI and Anthropic SDKs read first), or, without either, the
// latest reset of a rate-limit bucket the headers do not show as having
// room: anthropic-ratelimit-*-reset (an RFC 3339 time) and
// x-ratelimit-reset-* (OpenAI's "1s", "6m0s", "20ms", or bare seconds).
func TestRetryHint(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		h    map[string]string
		want time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond},
		{"HTTP date", map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{"HTTP date passed", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"zero is no hint", map[string]string{"Retry-After": "0"}, 0},
		{"negative is no hint", map[string]string{"Retry-After": "-3"}, 0},
		{"garbage is no hint", map[string]string{"Retry-After": "soon"}, 0},
		{"retry-after-ms first", map[string]string{"Retry-After": "2", "retry-after-ms": "1500"}, 1500 * time.Millisecond},
		{"bad retry-after-ms: Retry-After", map[string]string{"Retry-After": "2", "retry-after-ms": "x"}, 2 * time.Second},
		{"Retry-After before the resets", map[string]string{"Retry-After": "3", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "20s"}, 3 * time.Second},
		{"anthropic reset of the exhausted bucket", map[string]string{
			"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": now.Add(4 * time.Second).Format(time.RFC3339),
			"anthropic-ratelimit-tokens-remaining": "9000", "anthropic-ratelimit-tokens-reset": now.Add(50 * time.Second).Format(time.RFC3339),
		}, 4 * time.Second},
		{"anthropic, two exhausted: the later", map[string]string{
			"anthropic-ratelimit-input-tokens-remaining": "0", "anthropic-ratelimit-input-tokens-reset": now.Add(7 * time.Second).Format(time.RFC3339),
			"anthropic-ratelimit-output-tokens-remaining": "0", "anthropic-ratelimit-output-tokens-reset": now.Add(9 * time.Second).Format(time.RFC3339),
		}, 9 * time.Second},
		{"anthropic reset without its remaining", map[string]string{"anthropic-ratelimit-tokens-reset": now.Add(5 * time.Second).Format(time.RFC3339)}, 5 * time.Second},
		{"openai durations", map[string]string{
			"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s",
			"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "20ms",
		}, 6 * time.Minute},
		{"openai, the bucket with room is not waited for", map[string]string{
			"x-ratelimit-remaining-requests": "12", "x-ratelimit-reset-requests": "6m0s",
			"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1s",
		}, time.Second},
		{"bare seconds", map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "1.500"}, 1500 * time.Millisecond},
		{"unreadable reset", map[string]string{"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "later"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.h {
				h.Set(k, v)
			}
			if got := retryHint(h, now); got != tc.want {
				t.Errorf("retryHint(%v) = %v, want %v", tc.h, got, tc.want)
			}
		})
	}
}

// TestRetryHintOnTheWire: the answers that ask a client to slow down —
// 429, 503 (a server still loading its model) and 529 (Anthropic's
// overloaded) — carry the server's hint on their record; other failures
// do not.
func TestRetryHintOnTheWire(t *testing.T) {
	for _, tc := range []struct {
		status int
		class  record.ErrorClass
		want   time.Duration
	}{
		{http.StatusTooManyRequests, record.ErrHTTP429, 2 * time.Second},
		{http.StatusServiceUnavailable, record.ErrHTTP5xx, 2 * time.Second},
		{529, record.ErrHTTP5xx, 2 * time.Second},
		{http.StatusInternalServerError, record.ErrHTTP5xx, 0},
		{http.StatusBadRequest, record.ErrHTTP4xx, 0},
	} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "2")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(`{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`))
		}))
		c := protoClient(t, ts.URL+"/v1", ProtocolChat, "", nil)
		rec := streamOne(c, 0, 10, 10, UserMessage("hello"))
		ts.Close()
		if rec.Err != tc.class || rec.HTTPStatus != tc.status || rec.RetryAfter != tc.want {
			t.Errorf("HTTP %d: %s, status %d, retry after %v; want %s, %v", tc.status, rec.Err, rec.HTTPStatus, rec.RetryAfter, tc.class, tc.want)
		}
	}
}
