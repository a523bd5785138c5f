package endpoint

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sixpin/sixpin/internal/backoff"
	"github.com/sixpin/sixpin/record"
)

// ProbeSeed seeds the probe prompt the caller builds (ProbeRequest.One)
// and the probe's backoff jitter.
const ProbeSeed = 0x70726f6265 // "probe"

// probeAttempts is how many times a failing probe request is sent before
// the probe gives up: one transient fault must not cost the run its
// prompt lengths.
const probeAttempts = 3

// Template is what the server's chat template adds to a conversation's
// content, in prompt tokens.
type Template struct {
	// Overhead is what it adds to a conversation of one message.
	Overhead int
	// PerMessage is what each further message adds.
	PerMessage int
}

// Tokens is what the template adds to n messages.
func (t Template) Tokens(n int) int { return t.Overhead + max(n-1, 0)*t.PerMessage }

// ProbeRequest is what Probe sends.
type ProbeRequest struct {
	// One is a prompt of exactly one token, by the tokenizer the run's
	// prompts are counted with.
	One string
	// Conversation asks for the per-message overhead too (agentic
	// sessions and trace replay send whole conversations).
	Conversation bool
	// Backoff is the first wait before a failed probe request is sent
	// again; it doubles, up to MaxBackoff.
	Backoff, MaxBackoff time.Duration
}

// Probe measures the chat template: it sends a one-token prompt for one
// token and takes usage.prompt_tokens minus one; with Conversation, a
// three-message conversation too, to learn what each further message
// adds (PerMessage is Overhead when that part fails, and msg says so).
// It then learns whether the server hangs up on kept-alive connections
// after a streamed answer (checkKeepAlive, on the first answer's
// connection). A probe request that fails, or whose stream ends in the
// middle of an event where the usage comes, is sent again, up to
// probeAttempts times, after a backoff. ok is false when the probe still
// failed, was interrupted (cut at once: there is no grace period before
// the run), or the server reports no usage; msg says why. refused is the
// HTTP status the last attempt of the first request failed with, when
// it is one that every request of a run would get as well (Refusal); 0
// otherwise.
func Probe(ctx context.Context, c *Client, p ProbeRequest) (t Template, ok bool, msg string, refused int) {
	r := &call{Client: c, clk: Clock{Start: time.Now()}}
	var first connSeen
	base, err := r.probe(watchConn(ctx, &first), UserMessage(p.One), 1, p)
	if err != nil {
		if pe, isPE := err.(*probeError); isPE && Refusal(pe.status) {
			refused = pe.status
		}
		return Template{}, false, err.Error(), refused
	}
	t = Template{Overhead: base, PerMessage: base}
	c.checkKeepAlive(ctx, &first, func(ctx context.Context) *record.Record {
		return r.stream(ctx, ErrCutAtOnce, record.Request{Index: -1, PromptTokens: 1, OutputTokens: 1}, UserMessage(p.One), r.since())
	})
	if p.Conversation {
		three := []Message{{Role: RoleUser, Content: p.One}, {Role: RoleAssistant, Content: p.One}, {Role: RoleUser, Content: p.One}}
		all, err := r.probe(ctx, three, 3, p)
		if err != nil {
			return t, true, "per-message overhead unknown (" + err.Error() + "); assuming each message adds as much as the first", 0
		}
		t.PerMessage = max((all-base)/2, 0)
	}
	return t, true, "", 0
}

// probeError is a probe request that failed every attempt, the last
// with status (0: no answer).
type probeError struct {
	msg    string
	status int
}

func (e *probeError) Error() string { return e.msg }

// Refusal reports whether an HTTP status, given to a one-token request,
// refuses every request of a run alike: a malformed request or one the
// server will not take (400, 422: a body member it rejects), no or a
// wrong key (401, 403), no such path or model (404, 405). Sending a run's
// load into it would measure nothing and only hammer the server.
func Refusal(status int) bool {
	switch status {
	case 400, 401, 403, 404, 405, 422:
		return true
	}
	return false
}

// probe sends msgs (content tokens in all) for one token, again after a
// failure, and returns what the template added.
func (r *call) probe(ctx context.Context, msgs []Message, content int, p ProbeRequest) (int, error) {
	req := record.Request{Index: -1, PromptTokens: content, OutputTokens: 1}
	rng := rand.New(rand.NewPCG(ProbeSeed, uint64(content)))
	var rec *record.Record
	for attempt := 1; ; attempt++ {
		rec = r.stream(ctx, ErrCutAtOnce, req, msgs, r.since())
		class, why := string(rec.Err), rec.ErrMsg
		failed := rec.Failed()
		if !failed && !rec.HasUsage && r.cutInEvent {
			// The usage comes last: an answer cut off there says nothing
			// of whether the server reports it.
			failed, class, why = true, "usage cut off", "the stream ended in the middle of an event after the finish_reason, where the usage comes"
		}
		switch {
		case rec.Err == record.ErrInterrupted:
			return 0, fmt.Errorf("probe request %s", rec.ErrMsg)
		case !failed:
		case attempt == probeAttempts:
			return 0, &probeError{msg: fmt.Sprintf("probe request failed %d times (last: %s): %s", attempt, class, why), status: rec.HTTPStatus}
		case !backoff.Sleep(ctx, backoff.Jittered(rng, p.Backoff, p.MaxBackoff, attempt-1)):
			return 0, fmt.Errorf("probe interrupted before its attempt %d (the last failed: %s: %s)", attempt+1, class, why)
		default:
			continue
		}
		break
	}
	if !rec.HasUsage {
		return 0, fmt.Errorf("the server reports no usage, so the chat template's overhead is unknown")
	}
	return max(rec.Usage.PromptTokens-content, 0), nil
}
