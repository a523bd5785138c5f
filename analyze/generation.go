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
	// noToolStart is true when the message finished with tool calls but
	// no tool has a start time (reference rule): the sample is skipped.
	noToolStart bool
	// first is true when a text or reasoning part started within the
	// generation and every part could be read: ttftMS and decodeMS are
	// then set.
	first bool
	// ttftMS runs from created to the first text or reasoning part's
	// start (prefill, queueing and the network included).
	ttftMS int64
	// decodeMS runs from that first start to the last token: the tool
	// start when cut (tool-call arguments stream after the text), else
	// the last text or reasoning part's end, else end.
	decodeMS int64
}

// Tool-cut rules: when a generation's time ends at a tool's start.
const (
	// ToolCutReference is the field report's tool's rule
	// (src/opencode_skill/throughput.py, grapeot/opencode_skill@
	// 73e353aa351ae3fa82b678d2de8d4080ac77506b): a message that finished
	// with tool calls ends at its earliest tool start, and is no sample
	// when no tool has a start time (or it lies outside the message);
	// any other message ends at time.completed, tools or not.
	ToolCutReference = "reference"
	// ToolCutAnyTool is sixpin's first rule: a message with a started
	// tool ends at the earliest tool start when it finished with tool
	// calls or stored no finish reason (opencode before finish was
	// stored); one that finished with tool calls but has no started tool
	// ends at time.completed, its tools' time included.
	ToolCutAnyTool = "any-tool"
)

// ToolCuts lists the tool-cut rules, the default first.
var ToolCuts = []string{ToolCutReference, ToolCutAnyTool}

// timing works out g's model time under a tool-cut rule (ToolCut*).
func (g *generation) timing(rule string) timing {
	t := timing{end: g.completed}
	p := &g.parts
	cut := g.finish == "tool-calls"
	if rule == ToolCutAnyTool {
		cut = p.tools > 0 && (g.finish == "tool-calls" || g.finish == "")
	}
	if cut {
		if p.tools == 0 {
			t.noToolStart = true
			return t
		}
		if p.toolStart < g.created || p.toolStart > g.completed {
			t.outside = true
			return t
		}
		t.end, t.cut = p.toolStart, true
	}
	if p.texts > 0 && p.malformed == 0 && p.firstStart >= g.created && p.firstStart <= t.end {
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
