package harness

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

// A chat-template probe that fails once is sent again and the run is
// exact; one that keeps failing leaves the prompt pin unverifiable for
// that reason, instead of every prompt counted as drifted.
func TestProbeFailures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		fail int64 // the first chat requests answered 503
	}{{"fails once", 1}, {"keeps failing", 3}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, err := sim.New(sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "qwen2"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var chats atomic.Int64
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/chat/completions") && chats.Add(1) <= c.fail {
					io.Copy(io.Discard, r.Body)
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusServiceUnavailable)
					io.WriteString(w, `{"error":{"message":"warming up"}}`)
					return
				}
				s.ServeHTTP(w, r)
			}))
			defer ts.Close()
			o, err := run(t, Config{Profile: "vllm", Endpoint: ts.URL + "/v1", Model: "m"})
			if c.fail == 1 {
				if err != nil {
					t.Fatal(err)
				}
				checkExact(t, o.Run)
				return
			}
			p := o.Run.Pins.Prompt
			if p.Verified != results.Unverifiable || !strings.Contains(p.Reason, "probe request failed 3 times") ||
				!strings.Contains(p.Reason, "warming up") {
				t.Errorf("prompt pin %s (%s); want unverifiable, for the failed probe", p.Verified, p.Reason)
			}
			for _, why := range o.Run.Invalid {
				if strings.Contains(why, "prompt") {
					t.Errorf("invalid for the prompt pin: %s", why)
				}
			}
		})
	}
}
