package analyze

import (
	"context"
	"hash/fnv"
	"os"
	"path/filepath"
)

// Claude Code's transcripts, as public readers of them document (ccusage,
// simonw/claude-code-transcripts, ccstats) and the Messages API defines
// their usage: ~/.claude/projects/<the working directory, / and . as
// ->/<sessionId>.jsonl, subagents' in <sessionId>/subagents/*.jsonl
// ($CLAUDE_CONFIG_DIR/projects when that is set). One JSON object a
// line; its "type" says what it is:
//
//	user:      {"type":"user","sessionId","uuid","parentUuid","timestamp",
//	  "isSidechain","agentId"?,"message":{"role":"user","content":
//	  "text" | [{"type":"text"|"tool_result",...}]}}
//	assistant: {"type":"assistant","sessionId","uuid","timestamp",
//	  "requestId","isSidechain","isApiErrorMessage"?,"message":{"id":"msg_…",
//	  "model","role":"assistant","stop_reason",
//	  "content":[{"type":"text"|"thinking"|"tool_use",...}],
//	  "usage":{"input_tokens","cache_creation_input_tokens",
//	  "cache_read_input_tokens","output_tokens",...}}}
//	summary, system, file-history-snapshot, queue-operation, …: not
//	  messages.
//
// Claude Code writes one line per content block of a streamed message,
// the lines sharing message.id (their usage growing): the lines of one id
// are one model call. input_tokens excludes the cache reads and writes;
// output_tokens includes thinking. Timestamps are ISO-8601 UTC. A
// transcript holds no request or first-token time: a call is taken to
// start at the later of the last user record before it (the prompt, or
// the tool results it answers) and the previous call's last line, and to
// end at its own last line.

// ClaudeCodeDir is where Claude Code keeps its transcripts:
// $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects. getenv is
// os.Getenv or a stand-in.
func ClaudeCodeDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "projects")
	}
	return filepath.Join(homeDir(getenv), ".claude", "projects")
}

func homeDir(getenv func(string) string) string {
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return home
}

// ccLine is what one transcript line says that analyze reads.
type ccLine struct {
	typ, session, agent, uuid, requestID string
	sidechain, apiError                  bool
	ts                                   float64
	hasTS                                bool
	role, id, model, stop                string
	hasUsage                             bool
	input, cacheWrite, cacheRead, output float64
	// toolUse: an assistant line with a tool_use block; toolResult: a
	// user line with a tool_result block.
	toolUse, toolResult bool
	// content is message.content as raw JSON (aliasing the line): only
	// Texts reads it.
	content []byte
}

func parseCCLine(b []byte) (ccLine, error) {
	var l ccLine
	err := fields(b, func(key, val []byte) error {
		switch string(key) {
		case "type":
			l.typ, _ = str(val)
		case "sessionId":
			l.session, _ = str(val)
		case "agentId":
			l.agent, _ = str(val)
		case "uuid":
			l.uuid, _ = str(val)
		case "requestId":
			l.requestID, _ = str(val)
		case "isSidechain":
			l.sidechain = string(val) == "true"
		case "isApiErrorMessage":
			l.apiError = string(val) == "true"
		case "timestamp":
			l.ts, l.hasTS = jsonTime(val)
		case "message":
			return subfields(val, l.message)
		}
		return nil
	})
	if err == nil && l.typ == "" {
		err = errJSON
	}
	return l, err
}

func (l *ccLine) message(key, val []byte) error {
	switch string(key) {
	case "role":
		l.role, _ = str(val)
	case "id":
		l.id, _ = str(val)
	case "model":
		l.model, _ = str(val)
	case "stop_reason":
		l.stop, _ = str(val)
	case "usage":
		l.hasUsage = len(val) > 0 && val[0] == '{'
		return subfields(val, func(k, v []byte) error {
			switch string(k) {
			case "input_tokens":
				l.input, _ = number(v)
			case "cache_creation_input_tokens":
				l.cacheWrite, _ = number(v)
			case "cache_read_input_tokens":
				l.cacheRead, _ = number(v)
			case "output_tokens":
				l.output, _ = number(v)
			}
			return nil
		})
	case "content":
		l.content = val
		if len(val) == 0 || val[0] != '[' {
			return nil
		}
		return elements(val, func(e []byte) error {
			return subfields(e, func(k, v []byte) error {
				if string(k) == "type" {
					switch t, _ := str(v); t {
					case "tool_use":
						l.toolUse = true
					case "tool_result":
						l.toolResult = true
					}
				}
				return nil
			})
		})
	}
	return nil
}

// ccSession is one conversation of a transcript file: the main one, or
// a sidechain (subagent).
type ccSession struct {
	key  string
	msgs []msg
	// open maps a message id to its index in msgs (-1: a copy of a
	// message seen in an earlier file, ignored).
	open               map[string]int
	lastInput, prevEnd float64
}

// readClaudeCode reads the transcripts. A message already read from
// another file (a resumed session's copied history, a subagent's lines
// in its parent's file) is counted once, by an 8-byte hash of its id.
func (a *acc) readClaudeCode(ctx context.Context, files []string) error {
	seen := map[uint64]struct{}{}
	for _, path := range files {
		a.counts.Files++
		var order []*ccSession
		byKey := map[string]*ccSession{}
		err := eachLine(ctx, SourceClaudeCode, path, func(n int, line []byte) error {
			a.counts.Lines++
			l, err := parseCCLine(line)
			if err != nil {
				a.skipLine(path, n, "not a JSON object with a type")
				return nil
			}
			key := l.session
			if l.sidechain {
				switch {
				case l.agent != "":
					key += "/" + l.agent
				default:
					key += "/sidechain"
				}
			}
			s := byKey[key]
			if s == nil {
				s = &ccSession{key: key, open: map[string]int{}}
				byKey[key] = s
				order = append(order, s)
			}
			s.add(a, &l, seen)
			return nil
		})
		if err != nil {
			return err
		}
		for _, s := range order {
			a.session(s.key, s.msgs)
		}
	}
	return nil
}

// add takes one line into the session.
func (s *ccSession) add(a *acc, l *ccLine, seen map[uint64]struct{}) {
	switch {
	case l.typ == "user":
		if l.hasTS {
			s.lastInput = max(s.lastInput, l.ts)
		}
		m := msg{id: l.uuid, kind: kindUser, info: info{role: "user", created: l.ts, hasCreated: l.hasTS}}
		if l.toolResult {
			m.kind, m.name = kindOther, "user.tool_result"
		}
		s.msgs = append(s.msgs, m)
		return
	case l.typ != "assistant":
		s.msgs = append(s.msgs, msg{id: l.uuid, kind: kindOther, name: "type=" + l.typ})
		return
	case l.model == "<synthetic>":
		// Claude Code's own notices (API errors, interruptions): no call.
		s.msgs = append(s.msgs, msg{id: l.uuid, kind: kindOther, name: "assistant.model=<synthetic>"})
		return
	}
	id := l.id
	if id == "" {
		id = "uuid:" + l.uuid
	}
	if k, ok := s.open[id]; ok {
		if k >= 0 {
			s.msgs[k].merge(l)
			s.prevEnd = max(s.prevEnd, s.msgs[k].info.completed)
		}
		return
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write([]byte(l.requestID))
	sum := h.Sum64()
	if _, dup := seen[sum]; dup {
		a.counts.Duplicates++
		s.open[id] = -1
		return
	}
	seen[sum] = struct{}{}
	m := msg{id: id, info: info{role: "assistant", provider: "anthropic", model: l.model, failed: l.apiError}}
	if start, ok := requestStart(s.lastInput, s.prevEnd); ok {
		m.info.created, m.info.hasCreated = start, true
	} else {
		m.info.noRequestTime = true
	}
	m.merge(l)
	s.open[id] = len(s.msgs)
	s.msgs = append(s.msgs, m)
	s.prevEnd = max(s.prevEnd, m.info.completed)
}

// merge takes one more line of an assistant message: its end moves to
// the line's time, its usage to the largest seen.
func (m *msg) merge(l *ccLine) {
	i := &m.info
	if l.hasTS && l.ts >= i.completed {
		i.completed, i.hasCompleted = l.ts, true
	}
	if l.hasUsage {
		i.hasInput, i.hasOut = true, true
		i.input = max(i.input, l.input)
		i.cacheRead = max(i.cacheRead, l.cacheRead)
		i.cacheWrite = max(i.cacheWrite, l.cacheWrite)
		i.output = max(i.output, l.output)
	}
	if l.stop != "" {
		i.finish = l.stop
	} else if l.toolUse && i.finish == "" {
		i.finish = "tool_use"
	}
	i.failed = i.failed || l.apiError
}
