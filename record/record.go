// Package record is the vocabulary of one request and one server sample:
// what the wire client and the load generator hand to the collector.
//
// A Record is one request as the client saw it (its chunks, usage, error
// class, the server's own timings); a ServerSample is one scrape of the
// server's metrics; Discovery is what the server said about itself before
// the run; Request is one request of a plan, as it is to be sent; Pricing
// prices a request's usage. The package holds data and the per-request
// figures defined on it, nothing else: it imports only the standard
// library, so the wire (package endpoint) links no histogram, statistics
// or YAML code.
package record

import (
	"strings"
	"time"
)

// ErrorClass classifies a failed request. The empty class means success.
type ErrorClass string

// Error classes. A failed request is data: it is recorded with its class
// and the run goes on.
const (
	OK ErrorClass = ""
	// ErrConnect: the connection could not be made (refused, DNS, TLS),
	// or the server closed it before answering.
	ErrConnect ErrorClass = "connect"
	// ErrTimeout: the request timed out or the stream stalled.
	ErrTimeout ErrorClass = "timeout"
	// ErrHTTP4xx: a 4xx status other than 429, or another status that
	// is no answer: a redirect, which sixpin does not follow.
	ErrHTTP4xx ErrorClass = "http_4xx"
	// ErrHTTP429: rate limited.
	ErrHTTP429 ErrorClass = "http_429"
	// ErrHTTP5xx: a 5xx status.
	ErrHTTP5xx ErrorClass = "http_5xx"
	// ErrStreamCut: the stream ended before a finish_reason.
	ErrStreamCut ErrorClass = "stream_cut"
	// ErrMalformed: a chunk was not valid JSON.
	ErrMalformed ErrorClass = "malformed_chunk"
	// ErrBadContentType: a 200 answer that is neither an event stream nor
	// JSON (an HTML page from a proxy, say), or in an encoding sixpin
	// cannot read.
	ErrBadContentType ErrorClass = "bad_content_type"
	// ErrOversizedLine: a line of the stream was longer than the client's
	// limit (endpoint.Options.MaxLineBytes); the stream was not read further.
	ErrOversizedLine ErrorClass = "oversized_line"
	// ErrStreamError: the server sent an error event inside the stream.
	ErrStreamError ErrorClass = "stream_error"
	// ErrEmpty: the stream finished without any content or reasoning token.
	ErrEmpty ErrorClass = "empty_response"
	// ErrInterrupted: the run was interrupted (Ctrl-C) and the grace period
	// ran out while the request was in flight. Not an endpoint failure.
	ErrInterrupted ErrorClass = "interrupted"
	// ErrClient: sixpin itself could not build or send the request.
	ErrClient ErrorClass = "client"
)

// ErrorClasses lists every failure class in report order.
var ErrorClasses = []ErrorClass{ErrConnect, ErrTimeout, ErrHTTP4xx, ErrHTTP429, ErrHTTP5xx,
	ErrStreamCut, ErrMalformed, ErrBadContentType, ErrOversizedLine, ErrStreamError, ErrEmpty, ErrInterrupted, ErrClient}

// AsksToSlowDown reports whether an HTTP status asks the client to slow
// down: 429 (rate limited), 503 (unavailable: overloaded, or a server
// still loading its model) and 529 (Anthropic's overloaded). sixpin backs
// off after each.
func AsksToSlowDown(status int) bool { return status == 429 || status == 503 || status == 529 }

// Record is one request as the client saw it. All times are offsets from
// the start of the run on the monotonic clock. A Record is written by one
// goroutine (the request's) and handed over once, complete; it is not
// safe for concurrent use.
type Record struct {
	// Index is the request's index in the Plan.
	Index int
	// Class is the request's mix class ("" for a single-class scenario).
	Class string
	// Content is the prompt's content class (Request.Content; "" is
	// prose), for the per-request rows (no figure of the results is by
	// content).
	Content string
	// Scheduled is when the request was due: its arrival time in open
	// loop, its issue time in closed loop. Latencies are measured from it.
	Scheduled time.Duration
	// Sent is when the client began sending; Sent − Scheduled is the
	// schedule lag.
	Sent time.Duration
	// End is when the last byte of the response (or the failure) arrived.
	End time.Duration
	// Chunks are the token-bearing chunks (content or reasoning) in
	// arrival order.
	Chunks []Chunk
	// TokenReads is how many arrivals of data from the connection brought
	// token-bearing chunks (0: unknown, a record from before it was
	// counted): a read that follows one that drained the connection is an
	// arrival; one that follows a full read reads what was already
	// waiting. Chunks that arrived together were parsed apart by the
	// client, not sent apart by the server (DecodeMeasured).
	TokenReads int

	// RequestedPromptTokens and RequestedOutputTokens are the Plan's pins
	// for this request.
	RequestedPromptTokens int
	RequestedOutputTokens int
	// Usage is the server's count; HasUsage is false when it sent none.
	Usage    Usage
	HasUsage bool
	// FinishReason is the server's finish_reason ("length", "stop",
	// "tool_calls", ...).
	FinishReason string
	// ToolCalls is set when the answer carried tool calls: the turn ended
	// in a tool call. Their deltas are output chunks like content.
	ToolCalls bool
	// Model is the model id the server reported.
	Model string

	Err ErrorClass
	// ErrMsg is a one-line description of the failure (never contains
	// request headers, so never an API key).
	ErrMsg string
	// HTTPStatus is the response status (0 when no response was received).
	HTTPStatus int
	// RateLimitBucket is the limit a 429 names (BucketTokens, ...), from
	// the response's headers or body; "" when it names none.
	RateLimitBucket string
	// RetryAfter is the wait, in run time, that an answer asking to slow
	// down (AsksToSlowDown) asked for: its Retry-After or the reset of its
	// exhausted rate-limit bucket (0: none). Not kept in the spill.
	RetryAfter time.Duration
	// Backoff is how long sixpin waited after this answer before sending
	// again, in run time: its stream's wait (a connect failure, or an
	// answer that asked to slow down), or in open loop the stretch it
	// added to the pause of every arrival. Never part of a latency.
	Backoff time.Duration
	// Withheld counts open-loop arrivals that fell inside a pause after
	// answers asking to slow down and were not sent (k6's dropped
	// iterations), carried by one record of the pause.
	Withheld int
	// Reconnects counts the times the request was sent again on a new
	// connection because the server had closed the kept-alive one without
	// reading it (nothing was written, or the server's side reset the
	// connection unread). Not failures.
	Reconnects int

	// Session is the agentic session's index, -1 for an independent
	// request; Turn is the turn within it, from 0, and Attempt the retry
	// of that turn, from 0.
	Session, Turn, Attempt int
	// SessionEnd is set on a session's last record: why it ended
	// (SessionEnd* constants).
	SessionEnd string

	// Server is the server's own timing of the request, when it sent one
	// (llama.cpp's and the simulator's timings in the last chunk).
	Server ServerTimings
	// RequestID is the X-Request-Id the request was sent with ("" when
	// none was); IDEcho says whether the answer echoed it (not kept in
	// the spill).
	RequestID string
	IDEcho    IDEcho

	// Text is the answer's text, kept for a sample of requests (see
	// KeepsText; at most MaxTextBytes, the raw JSON string bodies of its
	// content): the collector scores it into Output and lets it go (it is
	// never spilled).
	Text []byte
	// Output is the sampled answer's text scored (nil: not sampled, or
	// no word in it).
	Output *OutputScore
}

// ServerTimings is a request as the server timed it, in run time.
type ServerTimings struct {
	// Has is true when the server sent its timings.
	Has bool
	// Queue is the wait before the server began the request (only when
	// QueueKnown); Prefill its prompt processing, to the first token;
	// Decode the rest of its generation.
	QueueKnown             bool
	Queue, Prefill, Decode time.Duration
	// PromptTokens the server computed, CachedTokens it found in its
	// prefix cache, PredictedTokens it generated.
	PromptTokens, CachedTokens, PredictedTokens int
	// DraftTokens its speculative decoding proposed (llama.cpp's draft_n)
	// and DraftAccepted of them it accepted (draft_n_accepted), in tokens:
	// 0 when the server sent none (llama.cpp sends them only when it
	// drafted).
	DraftTokens, DraftAccepted int
}

// IDEcho is how an answer echoed the request's X-Request-Id.
type IDEcho uint8

// IDEcho values.
const (
	IDNotEchoed IDEcho = iota // the answer has no X-Request-Id
	IDEchoed                  // it carries the id sent
	IDMismatch                // it carries another id
)

// Rate-limit buckets (RateLimits' fields).
const (
	BucketRequests       = "requests_per_minute"
	BucketTokens         = "tokens_per_minute"
	BucketUncachedTokens = "uncached_tokens_per_minute"
	BucketOutputTokens   = "output_tokens_per_minute"
	BucketTokensPerDay   = "tokens_per_day"
)

// Why an agentic session ended.
const (
	SessionEndTurns         = "turns"          // it took all its turns
	SessionEndContextWindow = "context_window" // its next prompt would not fit (or the server said so)
	SessionEndCostCap       = "cost_cap"       // it cost more than the cap
	SessionEndRateLimited   = "rate_limited"   // a 429 under abort-session, or retries exhausted
	SessionEndError         = "error"          // a turn failed otherwise
	SessionEndRunEnded      = "run_ended"      // the run's duration or request count ran out
	SessionEndInterrupted   = "interrupted"    // the run was interrupted
)

// Chunk is one token-bearing chunk of a stream.
type Chunk struct {
	// At is the arrival time (offset from the run start).
	At time.Duration
	// Bytes is the length of the chunk's text (content + reasoning).
	Bytes int32
	// Tokens is the number of tokens the chunk carried, when the client
	// knows it; 0 means unknown (apportioned from usage by Bytes).
	Tokens int32
	// Reasoning is true when the chunk carried reasoning text only.
	Reasoning bool
	// ClientLagUS is receive time − the server's send stamp in µs, when
	// the server stamps its chunks; -1 otherwise.
	ClientLagUS int32
}

// Usage is the server's token accounting for one request.
type Usage struct {
	PromptTokens int
	// CompletionTokens counts every generated token, reasoning included.
	CompletionTokens int
	ReasoningTokens  int
	// CachedTokens of the prompt were read from a prompt cache;
	// CacheWriteTokens were written to one (Anthropic's
	// cache_creation_input_tokens, priced apart; 0 elsewhere). Both are
	// part of PromptTokens.
	CachedTokens     int
	CacheWriteTokens int
}

// Outage is a time the endpoint could not be reached: from the first
// request that failed to connect to the first answer, on a connection
// opened for it, to a request sent after it (answers on connections kept
// alive from before say only that those still work). Times are seconds
// from the run start.
type Outage struct {
	StartS float64 `json:"start_s"`
	// EndS is when the endpoint answered on a new connection again, or,
	// when it had not by the end of the run (Recovered false), the last
	// failed attempt.
	EndS           float64 `json:"end_s"`
	FailedRequests int     `json:"failed_requests"`
	Recovered      bool    `json:"recovered"`
}

// Failed reports whether the request failed.
func (r *Record) Failed() bool { return r.Err != OK }

// BucketFromMessage names the bucket an error message describes ("Tokens
// per minute limit exceeded"), or "".
func BucketFromMessage(msg string) string {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "uncached"), strings.Contains(m, "input tokens per minute"):
		// Anthropic's input-tokens limit counts no cache reads.
		return BucketUncachedTokens
	case strings.Contains(m, "output tokens per minute"):
		return BucketOutputTokens
	case strings.Contains(m, "tokens per day"), strings.Contains(m, "per day"):
		return BucketTokensPerDay
	case strings.Contains(m, "requests per minute"), strings.Contains(m, "request rate"):
		return BucketRequests
	case strings.Contains(m, "tokens per minute"), strings.Contains(m, "token rate"):
		return BucketTokens
	}
	return ""
}
