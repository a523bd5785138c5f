package results

import (
	"github.com/sixpin/sixpin/scenario"
)

// Parity is a run's evidence that it sent the workload another tool sent
// (or will send): the token totals it planned and those the server said
// it served, and a digest of the planned requests' lengths and arrivals
// in order. Two tools agree on a workload when their planned totals and
// digests agree; a server's own counters (vLLM's
// vllm:prompt_tokens_total and vllm:generation_tokens_total, or `sixpin
// sim --request-log`) check the served side.
type Parity struct {
	// Planned is what the plan's requests ask for (nil when the workload
	// is not a list of independent requests: agentic sessions, whose
	// later prompts grow with the answers they get, and trace replays).
	Planned *PlannedTokens `json:"planned,omitempty"`
	// Served totals the server's usage over the requests that reported
	// one (the same totals as the file's tokens).
	Served TokenTotals `json:"served"`
}

// TokenTotals are token counts summed over requests.
type TokenTotals struct {
	Requests int `json:"requests"`
	// InputTokens counts prompt tokens, CachedInputTokens those of them a
	// prefix cache served (planned: could serve), OutputTokens generated
	// tokens (reasoning included).
	InputTokens       int64 `json:"input_tokens"`
	CachedInputTokens int64 `json:"cached_input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
}

// PlannedTokens are the totals of the plan's requests and the digest of
// their sequence.
type PlannedTokens struct {
	TokenTotals
	// SequenceSHA256 is SHA-256 over the planned requests' (input length,
	// output length, arrival offset), in order, encoded as Encoding says
	// (scenario.SequenceEncoding: three unsigned 64-bit big-endian
	// integers per request — tokens, tokens, whole microseconds).
	SequenceSHA256 string `json:"sequence_sha256"`
	Encoding       string `json:"encoding"`
}

// Planned is the planned side of the parity evidence of a plan whose
// sequence is seq (ok false: the plan has none, see
// scenario.Plan.Sequence; nil then).
func Planned(seq scenario.Sequence, ok bool) *PlannedTokens {
	if !ok {
		return nil
	}
	return &PlannedTokens{
		TokenTotals: TokenTotals{Requests: seq.Requests, InputTokens: seq.InputTokens,
			CachedInputTokens: seq.CachedInputTokens, OutputTokens: seq.OutputTokens},
		SequenceSHA256: seq.SHA256, Encoding: scenario.SequenceEncoding,
	}
}

// served is the served side of the parity evidence: the server's usage.
func served(t Tokens) TokenTotals {
	return TokenTotals{Requests: t.Requests, InputTokens: t.Input, CachedInputTokens: t.CachedInput, OutputTokens: t.Output}
}
