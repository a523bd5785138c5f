package analyze

import (
	"context"
	"slices"
)

// SourceAgent names the logs of Texts in its errors: Claude Code
// transcripts or Codex rollouts, told apart file by file.
const SourceAgent = "agent"

// codexTypes are the line types of a Codex rollout; a file whose first
// readable line has another type is a Claude Code transcript.
var codexTypes = []string{"session_meta", "turn_context", "response_item", "event_msg", "compacted"}

// Texts calls fn with the text of every message in the Claude Code
// transcripts and Codex rollouts at paths (.jsonl files, or directories
// searched for them, as Analyze reads them; each file's agent is told
// from its first readable line): the user's prompts, the tools' calls
// and results, the assistant's answers — what a model of those sessions
// read. Reasoning, summaries and Claude Code's own notices are left out;
// so are Codex's event copies of its messages. Texts come in a
// deterministic order (the files in Analyze's order, then line by line)
// and are not de-duplicated: a resumed session's copied history comes
// again. Nothing is kept: memory is one line at a time. Unreadable lines
// are skipped. opencode databases are not read.
func Texts(ctx context.Context, paths []string, fn func(text string) error) error {
	files, err := jsonlFiles(SourceAgent, paths)
	if err != nil {
		return err
	}
	for _, path := range files {
		codex, known := false, false
		err := eachLine(ctx, SourceAgent, path, func(n int, line []byte) error {
			if !known {
				l, err := parseCXLine(line)
				if err != nil {
					return nil
				}
				codex, known = slices.Contains(codexTypes, l.typ), true
			}
			if codex {
				return codexTexts(line, fn)
			}
			return claudeCodeTexts(line, fn)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// claudeCodeTexts calls fn with a transcript line's texts: a user line's
// prompt and tool results, an assistant line's text and tool calls'
// input (as JSON).
func claudeCodeTexts(line []byte, fn func(string) error) error {
	l, err := parseCCLine(line)
	if err != nil || (l.typ != "user" && l.typ != "assistant") || l.model == "<synthetic>" {
		return nil
	}
	if s, ok := str(l.content); ok {
		return emit(s, fn)
	}
	return blockTexts(l.content, fn)
}

// blockTexts calls fn with the texts of an array of content blocks:
// text blocks' text, tool_use blocks' input and tool_result blocks'
// content (a string or blocks again); thinking is left out.
func blockTexts(blocks []byte, fn func(string) error) error {
	if len(blocks) == 0 || blocks[0] != '[' {
		return nil
	}
	return elements(blocks, func(e []byte) error {
		var typ string
		var text, input, result []byte
		subfields(e, func(k, v []byte) error {
			switch string(k) {
			case "type":
				typ, _ = str(v)
			case "text":
				text = v
			case "input":
				input = v
			case "content":
				result = v
			}
			return nil
		})
		switch typ {
		case "text", "input_text", "output_text":
			s, _ := str(text)
			return emit(s, fn)
		case "tool_use":
			return emit(string(input), fn)
		case "tool_result":
			if s, ok := str(result); ok {
				return emit(s, fn)
			}
			return blockTexts(result, fn)
		}
		return nil
	})
}

// codexTexts calls fn with a rollout line's texts: a user's or the
// assistant's message, a tool call's arguments or input, a tool's output.
func codexTexts(line []byte, fn func(string) error) error {
	l, err := parseCXLine(line)
	if err != nil || l.typ != "response_item" {
		return nil
	}
	switch l.sub {
	case "message":
		if l.role != "user" && l.role != "assistant" {
			return nil
		}
		return blockTexts(l.text, fn)
	case "function_call", "custom_tool_call", "function_call_output", "custom_tool_call_output":
		if s, ok := str(l.text); ok {
			return emit(s, fn)
		}
		if len(l.text) > 0 && l.text[0] == '{' {
			return emit(string(l.text), fn)
		}
	}
	return nil
}

func emit(s string, fn func(string) error) error {
	if s == "" {
		return nil
	}
	return fn(s)
}
