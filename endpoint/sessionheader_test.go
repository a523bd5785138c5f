package endpoint

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/sim"
)

// A session's header carries its id in each named header, replacing a
// profile header of the same name, and keeps the client's own (the key,
// the profile's others) and the request id; a call without one sends the
// client's header unchanged.
func TestSessionHeader(t *testing.T) {
	srv, err := sim.New(sim.Config{Timing: sim.TimingNone, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var (
		mu   sync.Mutex
		seen []http.Header
	)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	defer ts.Close()
	tg := Target{BaseURL: ts.URL + "/v1", Model: "m", APIKey: "k", Headers: map[string]string{"X-Session-ID": "from-profile", "X-Team": "t"}}
	c, err := New(tg, Options{RequestIDPrefix: "r"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h := c.SessionHeader([]string{"X-Session-Id", "X-User-Id"}, "sess-7", nil)
	for _, hdr := range []http.Header{h, h, nil} {
		rec := c.Stream(context.Background(), Call{Req: record.Request{PromptTokens: 5, OutputTokens: 2},
			Msgs: UserMessage("hi"), Clock: Clock{Start: time.Now()}, Cut: ErrCutAfterGrace, Header: hdr})
		if rec.Failed() {
			t.Fatalf("%s: %s", rec.Err, rec.ErrMsg)
		}
	}
	if len(seen) != 3 {
		t.Fatalf("%d requests", len(seen))
	}
	for i, got := range seen {
		want := map[string]string{"X-Session-Id": "sess-7", "X-User-Id": "sess-7", "X-Team": "t", "Authorization": "Bearer k"}
		if i == 2 {
			want["X-Session-Id"], want["X-User-Id"] = "from-profile", ""
		}
		for k, v := range want {
			if vs := got.Values(k); v == "" && len(vs) != 0 || v != "" && (len(vs) != 1 || vs[0] != v) {
				t.Errorf("request %d: %s = %q, want %q", i, k, vs, v)
			}
		}
		if got.Get("X-Request-Id") == "" {
			t.Errorf("request %d: no X-Request-Id", i)
		}
	}
	if got := c.header.Get("X-Session-Id"); got != "from-profile" {
		t.Errorf("the client's own header changed: X-Session-Id %q", got)
	}
}
