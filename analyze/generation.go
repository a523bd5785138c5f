package analyze

// generation is one completed assistant message: one model call.
type generation struct {
	session         string
	provider, model string
	finish          string
	// created and completed are time.created and time.completed, Unix ms.
	created, completed int64
	// Token counts as opencode stores them: input without cache reads
	// and writes, output without reasoning.
	input, output, reasoning, cacheRead, cacheWrite int64
	parts                                           parts
}

// prompt is the whole prompt: input + cache reads + cache writes. It is
// the generation's context length.
func (g *generation) prompt() int64 { return g.input + g.cacheRead + g.cacheWrite }

// generated is everything the model generated: output + reasoning.
func (g *generation) generated() int64 { return g.output + g.reasoning }

// timing is a generation's model time, from its message and parts.
type timing struct {
	// end is when the model finished: time.completed, or the earliest
	// tool start when the message finished with tool calls (the tools'
	// run time is not model time). The generation time is end − created.
	end int64
	// cut is true when end is a tool start.
	cut bool
	// outside is true when a tool started outside the message's own span
	// [created, completed]: the sample is skipped.
	outside bool
	// first is true when a text or reasoning part started within the
	// generation: ttftMS and decodeMS are then set.
	first bool
	// ttftMS runs from created to the first text or reasoning part's
	// start (prefill, queueing and the network included).
	ttftMS int64
	// decodeMS runs from that first start to the last token: the tool
	// start when cut (tool-call arguments stream after the text), else
	// the last text or reasoning part's end, else end.
	decodeMS int64
}

// timing works out g's model time. A message is cut at its earliest tool
// start when it finished with tool calls ("tool-calls"), or when it has
// started tools and no finish reason (opencode before finish was stored).
func (g *generation) timing() timing {
	t := timing{end: g.completed}
	p := &g.parts
	if p.tools > 0 && (g.finish == "tool-calls" || g.finish == "") {
		if p.toolStart < g.created || p.toolStart > g.completed {
			t.outside = true
			return t
		}
		t.end, t.cut = p.toolStart, true
	}
	if p.texts > 0 && p.firstStart >= g.created && p.firstStart <= t.end {
		t.first = true
		t.ttftMS = p.firstStart - g.created
		last := t.end
		if !t.cut && p.lastEnd >= p.firstStart && p.lastEnd <= t.end {
			last = p.lastEnd
		}
		t.decodeMS = last - p.firstStart
	}
	return t
}
