package scenario

import "testing"

// One wording of each declared value a pin card and a mismatch both name.
func TestDeclaredWords(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{ConcurrencyWords(ConcurrencyDeclared{Mode: "closed", Streams: 16}), "closed loop, 16 concurrent streams"},
		{ConcurrencyWords(ConcurrencyDeclared{Mode: "closed", Streams: 1}), "closed loop, a single stream: per-stream = aggregate"},
		{ConcurrencyWords(ConcurrencyDeclared{Mode: "closed", Streams: 4, Sessions: true}),
			"closed loop, 4 concurrent agentic sessions (think time between turns)"},
		{ConcurrencyWords(ConcurrencyDeclared{Mode: "open", RateRPS: 2.5, Arrival: "gamma", Burstiness: 0.5, MaxInFlight: 64}),
			"open loop, 2.5 req/s gamma arrivals (burstiness 0.5), at most 64 in flight"},
		{ConcurrencyWords(ConcurrencyDeclared{Mode: "open", RateRPS: 2, Arrival: "poisson"}), "open loop, 2 req/s poisson arrivals, no in-flight cap"},
		{ConcurrencyWords(ConcurrencyDeclared{Mode: "trace", Streams: 9, Sessions: true}), "the trace's sessions at their recorded times (up to 9 at once)"},
		{TokensWords(TokensDeclared{Dist: "64", Min: 64, Max: 64, Mean: 64}), "64 tokens"},
		{TokensWords(TokensDeclared{Dist: "200", Min: 200, Max: 200, Mean: 155}), "200 tokens (mean 155)"},
		{TokensWords(TokensDeclared{Dist: "uniform [400, 600]", Min: 400, Max: 600, Mean: 500, Tokenizer: "qwen2"}),
			"uniform [400, 600] tokens (mean 500), built by tokenizer qwen2"},
		{TokensWords(TokensDeclared{Dist: PerClass, Mean: 3245}), "per class (see mix): mean 3,245 tokens over the mix"},
		{TokensWords(TokensDeclared{Dist: "8000", Min: 8000, Max: 8000, Mean: 8000, Tokenizer: "qwen2", Content: "prose"}),
			"8000 tokens, built by tokenizer qwen2, content prose"},
		{TokensWords(TokensDeclared{Dist: "8000", Min: 8000, Max: 8000, Mean: 8000, Content: "code 75%, json 25%"}),
			"8000 tokens, content code 75%, json 25%"},
		{ArrivalWords(ConcurrencyDeclared{Mode: "closed"}), "not declared"},
		{ClassesWords(nil), "one class"},
		{SwitchWords(nil), "not declared"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
