package trace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/jsonerr"
	"github.com/sixpin/sixpin/internal/numfmt"
)

// FormatMLPerfAgentic is MLPerf's agentic inference dataset: flat JSON
// Lines, one row per message. It is never detected; a scenario names it
// (workload.format).
const FormatMLPerfAgentic = "mlperf-agentic"

// MLPerfDefaultMaxTokens is the output cap of a client turn whose
// conversation gives none: the max_new_tokens MLPerf's agentic rules fix
// for both of its models (mlcommons/endpoints
// examples/10_Agentic_Inference/README.md, "Sampling Parameters and
// Thinking Flags", at ea33275).
const MLPerfDefaultMaxTokens = 8192

// MLPerfAgentic is an MLPerf agentic inference dataset in memory: its
// conversations (trajectories) in file order. The format follows
// mlcommons/endpoints at ea3327530376fef63d706f4105612e17c2c80a8d:
// scripts/agentic_inference_dataset_schema.json (the field list and the
// role state machine) and
// src/inference_endpoint/dataset_manager/agentic_inference_dataset.py
// (how rows become the messages of each request).
type MLPerfAgentic struct {
	// Source is the file's name; SHA256 the hex SHA-256 of its bytes.
	Source, SHA256 string
	Conversations  []MLPerfConversation
}

// MLPerfConversation is one trajectory: rows with turns 1, 2, … N.
type MLPerfConversation struct {
	// ID is the row's conversation_id: the session id of its requests.
	ID string
	// Line is the line of its first row.
	Line int
	// System is the first system prompt its rows give ("" none).
	System string
	Rows   []MLPerfRow
}

// MLPerfRow is one message of a conversation.
type MLPerfRow struct {
	Line int
	Turn int
	// Role is user, assistant or tool; user and tool rows are client
	// turns (each one request), assistant rows the recorded answers the
	// history re-sends.
	Role string
	// Content is the message text; HasContent is false for an assistant
	// row that only dispatches tools (content null or absent).
	Content    string
	HasContent bool
	// Reasoning is an assistant row's reasoning_content ("" none).
	Reasoning string
	// ToolCalls is an assistant row's tool_calls as written (OpenAI wire
	// format, checked); nil none.
	ToolCalls json.RawMessage
	// ToolResults are a tool row's results, one tool message each.
	ToolResults []MLPerfToolResult
	// Tools are the OpenAI tool definitions sent with a client turn, as
	// written; nil none (the conversation's first user row's then apply,
	// as in MLPerf's reference).
	Tools json.RawMessage
	// Name is the message's name ("" none).
	Name string
	// Delay is delay_seconds: the wait before this client turn is sent.
	Delay time.Duration
	// MaxTokens is the turn's output cap (max_new_tokens or
	// max_completion_tokens; 0: the conversation's, else
	// MLPerfDefaultMaxTokens).
	MaxTokens int
	// Params are the row's sampling parameters as `,"k":v` members of a
	// request body.
	Params []byte
}

// MLPerfToolResult is one entry of a tool row's tool_results.
type MLPerfToolResult struct {
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
}

// Client reports whether the row is a client turn: one request.
func (r *MLPerfRow) Client() bool { return r.Role == "user" || r.Role == "tool" }

// mlperfRow is one line as written. Every field of the schema's
// generationParameters is known, so that an unknown key (a typo) is an
// error; those sixpin cannot honour are refused by name.
type mlperfRow struct {
	Type             string            `json:"_type"`
	ConversationID   *string           `json:"conversation_id"`
	Turn             *int              `json:"turn"`
	Role             *string           `json:"role"`
	Content          *string           `json:"content"`
	System           *string           `json:"system"`
	Tools            json.RawMessage   `json:"tools"`
	ToolCalls        []json.RawMessage `json:"tool_calls"`
	ToolResults      []json.RawMessage `json:"tool_results"`
	ReasoningContent *string           `json:"reasoning_content"`
	DelaySeconds     *float64          `json:"delay_seconds"`
	Name             *string           `json:"name"`

	Model               *string         `json:"model"`
	MaxNewTokens        *int            `json:"max_new_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              *bool           `json:"stream"`
	N                   *int            `json:"n"`
	ChatTemplate        *string         `json:"chat_template"`
	Temperature         json.RawMessage `json:"temperature"`
	TopP                json.RawMessage `json:"top_p"`
	TopK                json.RawMessage `json:"top_k"`
	Seed                json.RawMessage `json:"seed"`
	RepetitionPenalty   json.RawMessage `json:"repetition_penalty"`
	FrequencyPenalty    json.RawMessage `json:"frequency_penalty"`
	PresencePenalty     json.RawMessage `json:"presence_penalty"`
	Stop                json.RawMessage `json:"stop"`
	LogitBias           json.RawMessage `json:"logit_bias"`
	User                json.RawMessage `json:"user"`
}

type mlperfToolCall struct {
	ID       *string         `json:"id"`
	Type     *string         `json:"type"`
	Function json.RawMessage `json:"function"`
}

type mlperfFunction struct {
	Name      *string `json:"name"`
	Arguments *string `json:"arguments"`
}

type mlperfToolResult struct {
	ToolCallID *string `json:"tool_call_id"`
	Content    *string `json:"content"`
}

// mlperfNext is the role state machine of the schema's stateMachine:
// which roles may follow each.
var mlperfNext = map[string]string{
	"":          "user",
	"user":      "assistant",
	"assistant": "tool or user",
	"tool":      "assistant or user",
}

// ReadMLPerfAgentic reads an MLPerf agentic inference dataset. When
// wantSHA256 is not empty the file's SHA-256 must equal it (hex, any
// case): a different file is refused before any row is read, with both
// digests. Every row is checked strictly — an unknown key, a wrong type,
// a broken role sequence or turn numbering is an error naming the file,
// line, column and field.
func ReadMLPerfAgentic(path, wantSHA256 string) (*MLPerfAgentic, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read MLPerf agentic dataset: %w", err)
	}
	sum := sha256.Sum256(b)
	got := hex.EncodeToString(sum[:])
	if want := strings.ToLower(strings.TrimSpace(wantSHA256)); want != "" && want != got {
		return nil, &Error{File: path, Field: "sha256", Err: fmt.Errorf("the file's SHA-256 is %s, not the %s the scenario declares: it is not the dataset the scenario names", got, want)}
	}
	d, err := DecodeMLPerfAgentic(path, b)
	if err != nil {
		return nil, err
	}
	d.SHA256 = got
	return d, nil
}

// DecodeMLPerfAgentic reads an MLPerf agentic dataset from b as
// ReadMLPerfAgentic does, without a digest to check; name is used in
// errors and as Source.
func DecodeMLPerfAgentic(name string, b []byte) (*MLPerfAgentic, error) {
	d := &MLPerfAgentic{Source: name}
	seen := map[string]int{} // conversation id → its first line
	var (
		c    *MLPerfConversation
		prev *MLPerfRow
	)
	err := lines(bufio.NewReader(bytes.NewReader(b)), func(n int, line []byte) error {
		l := jsonLine{file: name, n: n, b: line}
		var kind struct {
			Type string `json:"_type"`
		}
		if err := l.decode(&kind, false); err != nil {
			return err
		}
		if kind.Type == "dataset_metadata" {
			return nil // MLPerf's reference drops these rows before reading
		}
		var w mlperfRow
		if err := l.decode(&w, true); err != nil {
			return err
		}
		if w.Type != "" {
			return l.err("_type", "must be \"dataset_metadata\" or absent (got %q)", w.Type)
		}
		if err := l.missing([]string{"conversation_id", "turn", "role"}, []bool{w.ConversationID != nil, w.Turn != nil, w.Role != nil}); err != nil {
			return err
		}
		id := *w.ConversationID
		if err := mlperfID(l, id); err != nil {
			return err
		}
		if c == nil || c.ID != id {
			if first, ok := seen[id]; ok {
				return l.err("conversation_id", "rows of conversation %q are not together: it began at line %d (MLPerf requires a conversation's rows consecutive)", id, first)
			}
			seen[id] = n
			d.Conversations = append(d.Conversations, MLPerfConversation{ID: id, Line: n})
			c, prev = &d.Conversations[len(d.Conversations)-1], nil
		}
		r, err := mlperfRowOf(l, &w, prev)
		if err != nil {
			return err
		}
		if want := len(c.Rows) + 1; r.Turn != want {
			return l.err("turn", "must be %d: turns run 1, 2, 3, … without gaps or repeats (got %d)", want, r.Turn)
		}
		if w.System != nil && c.System == "" {
			c.System = *w.System
		}
		c.Rows = append(c.Rows, r)
		prev = &c.Rows[len(c.Rows)-1]
		return nil
	})
	if err != nil {
		return nil, named(name, err)
	}
	if len(d.Conversations) == 0 {
		return nil, &Error{File: name, Err: errors.New("no conversations in the dataset")}
	}
	return d, nil
}

// mlperfID checks a conversation id as MLPerf's reference does:
// non-empty printable ASCII.
func mlperfID(l jsonLine, id string) error {
	if id == "" {
		return l.err("conversation_id", "must not be empty")
	}
	for _, ch := range id {
		if ch < 32 || ch > 126 {
			return l.err("conversation_id", "must be printable ASCII (got %q)", id)
		}
	}
	return nil
}

// mlperfRowOf checks one row after prev (nil: the conversation's first)
// and returns it.
func mlperfRowOf(l jsonLine, w *mlperfRow, prev *MLPerfRow) (MLPerfRow, error) {
	r := MLPerfRow{Line: l.n, Turn: *w.Turn, Role: *w.Role}
	prevRole := ""
	if prev != nil {
		prevRole = prev.Role
	}
	switch r.Role {
	case "user", "assistant", "tool":
	default:
		return r, l.err("role", "must be user, assistant or tool (got %q)", r.Role)
	}
	if !strings.Contains(mlperfNext[prevRole], r.Role) {
		after := "at a conversation's start"
		if prevRole != "" {
			after = "after " + prevRole
		}
		return r, l.err("role", "%s cannot come %s: want %s", r.Role, after, mlperfNext[prevRole])
	}
	if w.Content != nil {
		r.Content, r.HasContent = *w.Content, true
	}
	if w.Name != nil {
		r.Name = *w.Name
	}
	switch r.Role {
	case "user":
		if !r.HasContent {
			return r, l.err("content", "required on a user row")
		}
	case "assistant":
		calls, err := mlperfToolCalls(l, w.ToolCalls)
		if err != nil {
			return r, err
		}
		r.ToolCalls = calls
		if calls == nil && !r.HasContent {
			return r, l.err("content", "required on an assistant row without tool_calls")
		}
		if w.ReasoningContent != nil {
			r.Reasoning = *w.ReasoningContent
		}
	case "tool":
		if prev.Role == "assistant" && prev.ToolCalls == nil {
			return r, l.err("role", "a tool row must follow an assistant row with tool_calls (line %d has none)", prev.Line)
		}
		if len(w.ToolResults) == 0 {
			return r, l.err("tool_results", "a tool row needs a non-empty tool_results list")
		}
		for i, raw := range w.ToolResults {
			f := fmt.Sprintf("tool_results[%d]", i)
			var tr mlperfToolResult
			if err := l.decodeAt(f, raw, &tr); err != nil {
				return r, err
			}
			if tr.ToolCallID == nil || *tr.ToolCallID == "" {
				return r, l.err(f, "tool_call_id: must be a non-empty string")
			}
			if tr.Content == nil {
				return r, l.err(f, "content: required")
			}
			r.ToolResults = append(r.ToolResults, MLPerfToolResult{ToolCallID: *tr.ToolCallID, Content: *tr.Content})
		}
	}
	for _, k := range []struct {
		key string
		set bool
	}{{"tool_calls", w.ToolCalls != nil && r.Role != "assistant"}, {"tool_results", w.ToolResults != nil && r.Role != "tool"},
		{"reasoning_content", w.ReasoningContent != nil && r.Role != "assistant"}, {"content", w.Content != nil && r.Role == "tool"}} {
		if k.set {
			return r, l.err(k.key, "not on a %s row", r.Role)
		}
	}
	if err := mlperfParams(l, w, &r); err != nil {
		return r, err
	}
	return r, nil
}

// mlperfToolCalls checks an assistant row's tool calls: each with a
// non-empty id, type "function" and a function's name and arguments.
func mlperfToolCalls(l jsonLine, raws []json.RawMessage) (json.RawMessage, error) {
	if len(raws) == 0 {
		return nil, nil
	}
	calls := make([]mlperfToolCall, len(raws))
	for i, raw := range raws {
		f := fmt.Sprintf("tool_calls[%d]", i)
		c := &calls[i]
		if err := l.decodeAt(f, raw, c); err != nil {
			return nil, err
		}
		switch {
		case c.ID == nil || *c.ID == "":
			return nil, l.err(f, "id: must be a non-empty string")
		case c.Type == nil || *c.Type != "function":
			return nil, l.err(f, "type: must be \"function\"")
		case c.Function == nil:
			return nil, l.err(f, "function: required")
		}
		var fn mlperfFunction
		if err := l.decodeAt(f+".function", c.Function, &fn); err != nil {
			return nil, err
		}
		if fn.Name == nil || fn.Arguments == nil {
			return nil, l.err(f+".function", "needs a name and arguments (a JSON string)")
		}
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, raw := range raws {
		if i > 0 {
			b.WriteByte(',')
		}
		if json.Compact(&b, raw) != nil {
			b.Write(raw)
		}
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// mlperfParams reads a row's delay and generation parameters: the
// output cap, the sampling parameters sent with the request, and the
// ones sixpin refuses (a per-turn model, several choices, no streaming,
// a client-side chat template).
func mlperfParams(l jsonLine, w *mlperfRow, r *MLPerfRow) error {
	if w.DelaySeconds != nil {
		if err := l.seconds("delay_seconds", *w.DelaySeconds); err != nil {
			return err
		}
		r.Delay = seconds(*w.DelaySeconds)
	}
	switch {
	case w.Model != nil:
		return l.err("model", "a per-turn model is not replayed: sixpin pins one model per run (pin 1)")
	case w.N != nil && *w.N != 1:
		return l.err("n", "must be 1: sixpin measures one answer per request (got %d)", *w.N)
	case w.Stream != nil && !*w.Stream:
		return l.err("stream", "must be true or absent: sixpin streams every request")
	case w.ChatTemplate != nil:
		return l.err("chat_template", "a per-turn chat template is the server's, not replayed")
	case w.MaxNewTokens != nil && w.MaxCompletionTokens != nil && *w.MaxNewTokens != *w.MaxCompletionTokens:
		return l.err("max_completion_tokens", "differs from max_new_tokens (%d ≠ %d)", *w.MaxCompletionTokens, *w.MaxNewTokens)
	}
	for _, m := range []struct {
		key string
		n   *int
	}{{"max_new_tokens", w.MaxNewTokens}, {"max_completion_tokens", w.MaxCompletionTokens}} {
		if m.n == nil {
			continue
		}
		if *m.n < 1 {
			return l.err(m.key, "must be ≥ 1 (got %d)", *m.n)
		}
		if err := l.tokens(m.key, *m.n); err != nil {
			return err
		}
		r.MaxTokens = *m.n
	}
	if w.Tools != nil {
		var tools []map[string]json.RawMessage
		if err := json.Unmarshal(w.Tools, &tools); err != nil {
			return l.err("tools", "must be an array of OpenAI tool definitions (objects)")
		}
		r.Tools = compact(w.Tools)
	}
	for _, p := range []struct {
		key string
		v   json.RawMessage
	}{{"temperature", w.Temperature}, {"top_p", w.TopP}, {"top_k", w.TopK}, {"seed", w.Seed},
		{"repetition_penalty", w.RepetitionPenalty}, {"frequency_penalty", w.FrequencyPenalty},
		{"presence_penalty", w.PresencePenalty}, {"stop", w.Stop}, {"logit_bias", w.LogitBias}, {"user", w.User}} {
		if p.v == nil || string(p.v) == "null" {
			continue
		}
		r.Params = append(r.Params, ',', '"')
		r.Params = append(r.Params, p.key...)
		r.Params = append(r.Params, '"', ':')
		r.Params = append(r.Params, compact(p.v)...)
	}
	return nil
}

// decodeAt decodes raw, the value of field (a path such as
// "tool_calls[0]"), strictly into v, and positions an error at the key
// at fault within it.
func (l jsonLine) decodeAt(field string, raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		sub, msg := jsonerr.Describe(err)
		if sub != "" {
			field += "." + sub
		}
		return l.err(field, "%s", msg)
	}
	return nil
}

// compact is v without insignificant whitespace.
func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// ClientTurns counts the requests of a conversation: its user and tool
// rows.
func (c *MLPerfConversation) ClientTurns() int {
	n := 0
	for i := range c.Rows {
		if c.Rows[i].Client() {
			n++
		}
	}
	return n
}

// Trace is the dataset as a trace of token counts, for the summaries,
// the KV-cache preflight and the declared pins: one session per
// conversation, all starting at 0; one turn per client row, its prompt
// the conversation up to it counted by count (each message's texts; with
// the earlier answers' reasoning when keepReasoning), its output the
// recorded answer that follows (its content, tool calls and reasoning),
// its think time the row's delay.
func (d *MLPerfAgentic) Trace(count func(string) int, keepReasoning bool) *Trace {
	t := &Trace{Source: d.Source, Format: FormatMLPerfAgentic}
	for _, c := range d.Conversations {
		s := Session{ID: c.ID}
		prompt := 0
		if c.System != "" {
			prompt = count(c.System)
		}
		var cur *Turn
		for i := range c.Rows {
			r := &c.Rows[i]
			switch {
			case r.Client():
				prompt += count(r.Content)
				for _, tr := range r.ToolResults {
					prompt += count(tr.Content)
				}
				s.Turns = append(s.Turns, Turn{InputTokens: prompt, Think: r.Delay})
				cur = &s.Turns[len(s.Turns)-1]
			default:
				answer := count(r.Content) + count(string(r.ToolCalls))
				reasoning := count(r.Reasoning)
				if cur != nil {
					cur.OutputTokens += answer + reasoning
					cur.ReasoningTokens += reasoning
				}
				prompt += answer
				if keepReasoning {
					prompt += reasoning
				}
			}
		}
		for k := range s.Turns {
			s.Turns[k].OutputTokens = max(s.Turns[k].OutputTokens, 1)
		}
		if len(s.Turns) > 0 {
			s.Turns[0].Think = 0 // a trace's first turn waits for nothing; the runner waits the row's delay
			t.Sessions = append(t.Sessions, s)
		}
	}
	return t
}

// MLPerfSalts are the two salts MLPerf's reference puts around a
// conversation's system prompt when enable_salt is on: one per
// trajectory repeat (repeat from 1), one per conversation, each the hex
// of a 2-byte BLAKE2b digest of the repeat's decimal number and of the
// conversation id (mlcommons/endpoints ea33275,
// src/inference_endpoint/load_generator/agentic_inference_strategy.py,
// _messages_with_trajectory_salt). The system message then reads
// "[salt: R]\n\nSYSTEM\n\n[salt: C]": requests of one trajectory share
// their whole prefix, conversations of one repeat share the repeat salt
// and the system prompt, and no two repeats share a token.
func MLPerfSalts(repeat int, conversation string) (repeatSalt, convSalt string) {
	return blake2b2(fmt.Sprint(repeat)), blake2b2(conversation)
}

// MLPerfSaltedSystem is the system prompt salted as MLPerfSalts says.
func MLPerfSaltedSystem(system string, repeat int, conversation string) string {
	rs, cs := MLPerfSalts(repeat, conversation)
	return "[salt: " + rs + "]\n\n" + system + "\n\n[salt: " + cs + "]"
}

// MLPerfSessionID is the id MLPerf's reference gives repeat (from 1) of
// a conversation, and sends as X-Session-ID: the conversation id, then
// "ID__repeat_N" for later repeats (agentic_inference_strategy.py,
// _next_conversation_instance).
func MLPerfSessionID(conversation string, repeat int) string {
	if repeat <= 1 {
		return conversation
	}
	return conversation + "__repeat_" + fmt.Sprint(repeat)
}

// Describe is a one-line account of the dataset: "3 conversations, 11
// requests, SHA-256 ab12…".
func (d *MLPerfAgentic) Describe() string {
	n := 0
	for i := range d.Conversations {
		n += d.Conversations[i].ClientTurns()
	}
	return fmt.Sprintf("%s, %s, SHA-256 %s", numfmt.Count(len(d.Conversations), "conversation", "conversations"),
		numfmt.Count(n, "request", "requests"), d.SHA256)
}
