package harness

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

// An exact output pin against a profile without a don't-stop-early
// control (openai-compatible) says what was verified: the lengths came
// out exact in every request with max_tokens alone, or they did not and
// nothing could have enforced them — never "exact via none".
func TestExactOutputWithoutControl(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		natural int // the server's median natural answer, tokens (24 are asked)
		verdict results.Verdict
		reason  string
	}{
		{"answers longer than asked", 200, results.Verified, "exact in 16 of 16 requests without any don't-stop-early control"},
		{"answers that stop early", 12, results.Contradicted, "nothing could enforce it: profile openai-compatible has no don't-stop-early control"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, err := sim.New(sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "o200k_base", NaturalOutputTokens: c.natural})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ts := httptest.NewServer(s)
			defer ts.Close()
			o, err := run(t, Config{Profile: "openai-compatible", Endpoint: ts.URL + "/v1", Model: "m"})
			if (err == nil) != (c.verdict == results.Verified) || (err != nil && !errors.Is(err, ErrInvalid)) {
				t.Fatalf("err = %v, want verdict %s", err, c.verdict)
			}
			var row report.CardRow
			for _, r := range report.PinCard(o.Run).Rows {
				if r.Pin == "output" {
					row = r
				}
			}
			if row.Verdict != c.verdict || !strings.Contains(row.Reason, c.reason) {
				t.Errorf("output pin %s: %q, want %s saying %q", row.Verdict, row.Reason, c.verdict, c.reason)
			}
			if want := "24 tokens, exact, not enforced (no don't-stop-early control)"; row.Declared != want {
				t.Errorf("output declared %q, want %q", row.Declared, want)
			}
		})
	}
}
