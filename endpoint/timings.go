package endpoint

import (
	"strconv"
	"time"

	"github.com/sixpin/sixpin/record"
)

// timings is a response's own timing of itself, as llama.cpp sends it in
// its last chunk ("timings": prompt_n, prompt_ms, predicted_n,
// predicted_ms, cache_n; draft_n and draft_n_accepted when it speculated)
// and the simulator too, with its queue_ms. It is read once per request
// (the last chunk), never per token.
type timings struct {
	has, hasQueue                bool
	promptN, cacheN, predictedN  int
	draftN, draftAccepted        int
	promptMS, predictedMS, queue float64
}

// timingsMember reads one member of the timings object.
func (p *parser) timingsMember(key []byte, c *chunk) bool {
	t := &c.timings
	switch string(key) {
	case "prompt_n", "cache_n", "predicted_n":
		v, ok := p.integer()
		switch key[0] {
		case 'p':
			if key[1] == 'r' && key[2] == 'o' {
				t.promptN = int(v)
			} else {
				t.predictedN = int(v)
			}
		case 'c':
			t.cacheN = int(v)
		}
		return ok
	case "draft_n":
		v, ok := p.integer()
		t.draftN = int(v)
		return ok
	case "draft_n_accepted":
		v, ok := p.integer()
		t.draftAccepted = int(v)
		return ok
	case "prompt_ms", "predicted_ms", "queue_ms":
		if p.isNull() {
			return true
		}
		num, ok := p.number()
		if !ok {
			return false
		}
		v, err := strconv.ParseFloat(string(num), 64)
		switch key[0] {
		case 'q':
			t.queue, t.hasQueue = v, true
		case 'p':
			if key[2] == 'o' {
				t.promptMS = v
			} else {
				t.predictedMS = v
			}
		}
		return err == nil
	}
	return p.skip()
}

// results converts the timings to the record's form, their times from
// the server's wall clock to run time on clk.
func (t *timings) results(clk Clock) record.ServerTimings {
	ms := func(v float64) time.Duration { return clk.Run(time.Duration(v * float64(time.Millisecond))) }
	return record.ServerTimings{Has: true, QueueKnown: t.hasQueue, Queue: ms(t.queue), Prefill: ms(t.promptMS),
		Decode: ms(t.predictedMS), PromptTokens: t.promptN, CachedTokens: t.cacheN, PredictedTokens: t.predictedN,
		DraftTokens: t.draftN, DraftAccepted: t.draftAccepted}
}
