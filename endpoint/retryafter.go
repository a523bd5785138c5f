package endpoint

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryHint is the wait an answer asks for before the next request, read
// as the OpenAI and Anthropic SDKs read it: retry-after-ms, else
// Retry-After (seconds, fractional ones too, or an HTTP date). Without
// either, it is the latest reset among the rate-limit buckets that are
// not shown to have room (remaining > 0): anthropic-ratelimit-*-reset (an
// RFC 3339 time) and x-ratelimit-reset-* (a Go-style duration as OpenAI
// writes it, "1s", "6m0s", "20ms", or bare seconds). 0: no hint (a zero,
// negative, past or unreadable value is none). Wall-clock time; it is read
// only for an answer that asks to slow down, never per chunk.
func retryHint(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	if d := retryAfter(strings.TrimSpace(h.Get("Retry-After")), now); d > 0 {
		return d
	}
	var wait time.Duration
	for k, vs := range h {
		if len(vs) == 0 {
			continue
		}
		k = strings.ToLower(k)
		v := strings.TrimSpace(vs[0])
		var d time.Duration
		var remaining string
		if b, ok := strings.CutPrefix(k, "anthropic-ratelimit-"); ok {
			b, ok = strings.CutSuffix(b, "-reset")
			if !ok {
				continue
			}
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				continue
			}
			d, remaining = t.Sub(now), "anthropic-ratelimit-"+b+"-remaining"
		} else if b, ok := strings.CutPrefix(k, "x-ratelimit-reset-"); ok {
			d, remaining = resetDuration(v), "x-ratelimit-remaining-"+b
		} else {
			continue
		}
		if n, err := strconv.ParseFloat(strings.TrimSpace(h.Get(remaining)), 64); err == nil && n > 0 {
			continue // this bucket has room: not what refused the request
		}
		wait = max(wait, d)
	}
	return wait
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

// resetDuration reads an x-ratelimit-reset-* value: a duration ("6m0s",
// "20ms") or bare seconds ("1.500"); 0 when it is neither.
func resetDuration(v string) time.Duration {
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(secs * float64(time.Second))
	}
	d, _ := time.ParseDuration(v)
	return d
}
