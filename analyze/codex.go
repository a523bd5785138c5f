package analyze

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
)

// Codex CLI's rollouts (openai/codex, codex-rs: protocol.rs and the
// rollout recorder): ${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/
// rollout-<time>-<id>.jsonl, one session a file. Each line is a
// RolloutLine, {"timestamp": ISO-8601, "type", "payload"}:
//
//	session_meta:  {"id","timestamp","cwd","originator","cli_version",
//	  "model_provider"?,...}
//	turn_context:  {"cwd","model","effort"?,...}: the model of the turns after it
//	response_item: {"type":"message"(role user|assistant|developer) |
//	  "reasoning" | "function_call" | "function_call_output" |
//	  "custom_tool_call" | "custom_tool_call_output" | ...}
//	event_msg:     {"type":"token_count","info":{"total_token_usage",
//	  "last_token_usage","model_context_window"}|null,"rate_limits":
//	  {"primary":{"used_percent","window_minutes",...},"secondary":...}|null}
//	  | {"type":"user_message",...} | {"type":"agent_message",...} | ...
//	compacted:     {"message",...}
//
// TokenUsage is {"input_tokens","cached_input_tokens","output_tokens",
// "reasoning_output_tokens","total_tokens"}: the cached tokens are part
// of the input (non_cached_input = input − cached) and the reasoning part
// of the output. Codex emits a token_count after each model response,
// last_token_usage being that call's; a token_count whose total equals
// the one before repeats it (a rate-limit update) and is no call. A
// rollout has no request or first-token time: a call is taken to start at
// the later of the last input before it (the user's message, a tool's
// output) and the previous call's end, and to end at its token_count.

// CodexDir is where Codex keeps its rollouts: $CODEX_HOME/sessions, else
// ~/.codex/sessions. getenv is os.Getenv or a stand-in.
func CodexDir(getenv func(string) string) string {
	if d := getenv("CODEX_HOME"); d != "" {
		return filepath.Join(d, "sessions")
	}
	return filepath.Join(homeDir(getenv), ".codex", "sessions")
}

// DefaultCodexProvider names the provider of a rollout whose session_meta
// names none (Codex's default provider).
const DefaultCodexProvider = "openai"

// usage is a Codex TokenUsage.
type usage struct {
	input, cached, output, reasoning, total float64
	ok                                      bool
}

func parseUsage(val []byte) usage {
	u := usage{ok: len(val) > 0 && val[0] == '{'}
	subfields(val, func(k, v []byte) error {
		switch string(k) {
		case "input_tokens":
			u.input, _ = number(v)
		case "cached_input_tokens":
			u.cached, _ = number(v)
		case "output_tokens":
			u.output, _ = number(v)
		case "reasoning_output_tokens":
			u.reasoning, _ = number(v)
		case "total_tokens":
			u.total, _ = number(v)
		}
		return nil
	})
	return u
}

func (u usage) minus(v usage) usage {
	return usage{input: u.input - v.input, cached: u.cached - v.cached, output: u.output - v.output,
		reasoning: u.reasoning - v.reasoning, total: u.total - v.total, ok: true}
}

// cxLine is what one rollout line says that analyze reads.
type cxLine struct {
	typ, sub     string // line type, payload.type
	ts           float64
	hasTS        bool
	id, provider string // session_meta
	model        string // turn_context
	role         string // response_item message
	hasInfo      bool   // token_count
	total, last  usage
	limits       []ReportedLimit
	// text is the payload's text as raw JSON (aliasing the line): a
	// message's content, a tool call's arguments or input, a tool's
	// output. Only Texts reads it.
	text []byte
}

func parseCXLine(b []byte) (cxLine, error) {
	var l cxLine
	var payload []byte
	err := fields(b, func(key, val []byte) error {
		switch string(key) {
		case "type":
			l.typ, _ = str(val)
		case "timestamp":
			l.ts, l.hasTS = jsonTime(val)
		case "payload":
			payload = val
		}
		return nil
	})
	if err == nil && l.typ == "" {
		err = errJSON
	}
	if err != nil {
		return l, err
	}
	return l, subfields(payload, func(key, val []byte) error {
		switch string(key) {
		case "type":
			l.sub, _ = str(val)
		case "id":
			l.id, _ = str(val)
		case "model_provider":
			l.provider, _ = str(val)
		case "model":
			l.model, _ = str(val)
		case "role":
			l.role, _ = str(val)
		case "content", "arguments", "input", "output":
			l.text = val
		case "info":
			l.hasInfo = len(val) > 0 && val[0] == '{'
			return subfields(val, func(k, v []byte) error {
				switch string(k) {
				case "total_token_usage":
					l.total = parseUsage(v)
				case "last_token_usage":
					l.last = parseUsage(v)
				}
				return nil
			})
		case "rate_limits":
			return subfields(val, func(k, v []byte) error {
				if string(k) != "primary" && string(k) != "secondary" {
					return nil
				}
				w := ReportedLimit{Name: string(k)}
				ok := false
				subfields(v, func(k, v []byte) error {
					switch string(k) {
					case "used_percent":
						w.MaxUsedPercent, ok = number(v)
					case "window_minutes":
						m, _ := number(v)
						w.WindowMinutes = int(m)
					}
					return nil
				})
				if ok {
					l.limits = append(l.limits, w)
				}
				return nil
			})
		}
		return nil
	})
}

// readCodex reads the rollouts, a session per file.
func (a *acc) readCodex(ctx context.Context, files []string) error {
	for _, path := range files {
		a.counts.Files++
		id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		provider, model := DefaultCodexProvider, ""
		var msgs []msg
		var prev usage
		var lastInput, prevEnd float64
		calls := 0
		err := eachLine(ctx, SourceCodex, path, func(n int, line []byte) error {
			a.counts.Lines++
			l, err := parseCXLine(line)
			if err != nil {
				a.skipLine(path, n, "not a JSON object with a type")
				return nil
			}
			name := l.typ
			if l.sub != "" {
				name += "." + l.sub
			}
			other := func() { msgs = append(msgs, msg{kind: kindOther, name: name}) }
			switch {
			case l.typ == "session_meta":
				if l.id != "" {
					id = l.id
				}
				if l.provider != "" {
					provider = l.provider
				}
				other()
			case l.typ == "turn_context":
				if l.model != "" {
					model = l.model
				}
				other()
			case l.typ == "event_msg" && l.sub == "user_message":
				if l.hasTS {
					lastInput = max(lastInput, l.ts)
				}
				msgs = append(msgs, msg{kind: kindUser, info: info{role: "user", created: l.ts, hasCreated: l.hasTS}})
			case l.typ == "response_item" && (l.sub == "message" && l.role == "user" || strings.HasSuffix(l.sub, "_output")):
				// What the next call sends: the user's message (its
				// response_item twin of user_message), a tool's output.
				if l.hasTS {
					lastInput = max(lastInput, l.ts)
				}
				other()
			case l.typ == "event_msg" && l.sub == "token_count":
				a.limits(l.limits)
				if !l.hasInfo || !l.total.ok {
					other()
					return nil
				}
				if l.total == prev {
					a.counts.Duplicates++
					return nil
				}
				call := l.last
				if !call.ok {
					call = l.total.minus(prev)
				}
				prev = l.total
				calls++
				m := msg{id: id + "#" + strconv.Itoa(calls), info: info{role: "assistant", provider: provider, model: model,
					completed: l.ts, hasCompleted: l.hasTS, hasInput: true, hasOut: true,
					input: call.input - call.cached, cacheRead: call.cached, output: call.output - call.reasoning, reasoning: call.reasoning}}
				if start, ok := requestStart(lastInput, prevEnd); ok {
					m.info.created, m.info.hasCreated = start, true
				} else {
					m.info.noRequestTime = true
				}
				if l.hasTS {
					prevEnd = max(prevEnd, l.ts)
				}
				msgs = append(msgs, m)
			default:
				other()
			}
			return nil
		})
		if err != nil {
			return err
		}
		a.session(id, msgs)
	}
	return nil
}

// limits keeps the highest use of each vendor-reported rate-limit window.
func (a *acc) limits(ls []ReportedLimit) {
	for _, l := range ls {
		found := false
		for i := range a.reported {
			r := &a.reported[i]
			if r.Name == l.Name && r.WindowMinutes == l.WindowMinutes {
				r.MaxUsedPercent = max(r.MaxUsedPercent, l.MaxUsedPercent)
				r.Samples++
				found = true
			}
		}
		if !found {
			l.Samples = 1
			a.reported = append(a.reported, l)
		}
	}
}
