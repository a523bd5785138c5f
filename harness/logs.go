package harness

import (
	"context"
	"fmt"

	"github.com/sixpin/sixpin/analyze"
	"github.com/sixpin/sixpin/prompt"
	"github.com/sixpin/sixpin/scenario"
)

// logLines reads the agent logs a scenario's from-logs prompts are built
// from (pins.prompt.logs) into the prompt builder's lines: nil when it
// names none. Logs that give fewer than two lines of text are bad input,
// refused before anything is sent.
func logLines(ctx context.Context, sc *scenario.Scenario) (*prompt.LogLines, error) {
	path := sc.LogsPath()
	if path == "" {
		return nil, nil
	}
	l := prompt.NewLogLines()
	texts := 0
	err := analyze.Texts(ctx, []string{path}, func(t string) error {
		texts++
		l.Add(t)
		return nil
	})
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, fmt.Errorf("%w: pins.prompt.logs: %w", ErrBadInput, err)
	case len(l.Lines()) < 2:
		return nil, fmt.Errorf("%w: pins.prompt.logs %s: %d messages with %d distinct lines of text, too few to build prompts from (content from-logs reads Claude Code transcripts and Codex rollouts: a .jsonl file or a directory of them)",
			ErrBadInput, sc.Pins.Prompt.Logs, texts, l.Distinct())
	}
	return l, nil
}
