package harness

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/internal/clip"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/prompt"
	"github.com/sixpin/sixpin/tokenizer"
)

// FallbackTokenizer builds prompts when a profile names no tokenizer.
// sixpin's prompt vocabulary is common English words, one token each in
// practically every modern vocabulary, so it is close; the server's usage
// then confirms or refutes the lengths.
const FallbackTokenizer = "o200k_base"

// tokenizerChoice is whose count the prompts were built to.
type tokenizerChoice struct {
	label    string
	fallback bool
	warning  string
}

// promptBuilder resolves the tokenizer (--tokenizer, else the profile's,
// else the fallback) and builds the prompt builder with it, and with the
// from-logs class's lines when logs is not nil. The server's /tokenize is
// asked once per vocabulary item and log line; if it has none, the
// fallback is used, with a warning.
func promptBuilder(ctx context.Context, cfg Config, tg *target, logs *prompt.LogLines) (*prompt.Builder, tokenizerChoice, error) {
	var opts []prompt.Option
	if logs != nil {
		opts = append(opts, prompt.WithLogs(logs))
	}
	name := cfg.Tokenizer
	if name == "" {
		name = tg.profile.Tokenizer
	}
	name, err := tokenizerName(name)
	if err != nil {
		return nil, tokenizerChoice{}, fmt.Errorf("%w: --tokenizer: %w", ErrBadInput, err)
	}
	var ch tokenizerChoice
	if name == "" {
		name, ch.fallback = FallbackTokenizer, true
		ch.warning = fmt.Sprintf("profile %s names no tokenizer: prompts are built to %s, and pin 2 is unverified until the server's usage confirms their lengths",
			tg.profile.Name, FallbackTokenizer)
	}
	if name == profiles.TokenizerServer {
		st := endpoint.NewServerTokenizer(tg.Target)
		b, err := prompt.NewBuilder(st.Counter(ctx), opts...)
		if err == nil {
			return b, tokenizerChoice{label: "server (/tokenize)"}, nil
		}
		name, ch.fallback = FallbackTokenizer, true
		ch.warning = fmt.Sprintf("the server's /tokenize could not be used (%v): prompts are built to %s, and pin 2 is unverified until the server's usage confirms their lengths",
			err, FallbackTokenizer)
	}
	tok, err := tokenizer.Get(name)
	if err != nil {
		return nil, ch, fmt.Errorf("%w: tokenizer: %w", ErrBadInput, err)
	}
	b, err := prompt.NewBuilder(func(s string) (int, error) { return tok.Count(s), nil }, opts...)
	if err != nil {
		return nil, ch, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	ch.label = tok.Name()
	if ch.fallback {
		ch.label += " (fallback)"
	}
	return b, ch, nil
}

// tokenizerName resolves a --tokenizer value: "" (the profile's), server,
// a built-in name, hf:PATH, or a bare path to an existing tokenizer file,
// which stands for hf:PATH. Anything else is an error listing the valid
// choices.
func tokenizerName(name string) (string, error) {
	if name == "" || name == profiles.TokenizerServer || strings.HasPrefix(name, tokenizer.HFPrefix) || slices.Contains(tokenizer.Names(), name) {
		return name, nil
	}
	if fi, err := os.Stat(name); err == nil && fi.Mode().IsRegular() {
		return tokenizer.HFPrefix + name, nil
	}
	return "", fmt.Errorf("unknown tokenizer %s (valid: %s, %s, or a path to a tokenizer.json)",
		clip.Quote(name), profiles.TokenizerServer, strings.Join(tokenizer.Names(), ", "))
}
