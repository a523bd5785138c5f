// Package tokenizer counts and encodes text the way a model's tokenizer
// does, offline and in pure Go.
//
// It has OpenAI's tiktoken encodings (cl100k_base,
// o200k_base), Hugging Face byte-level BPE tokenizer.json files (Qwen,
// Llama 3 and the like; not SentencePiece ones), an embedded Qwen2
// tokenizer, and sixpin's own word-level count (one token per
// whitespace-separated word) as the fallback when a model's tokenizer is
// unknown.
package tokenizer

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	tiktoken "github.com/tiktoken-go/tokenizer"
)

// Tokenizer encodes text to token ids. Implementations are safe for
// concurrent use.
type Tokenizer interface {
	// Name identifies the tokenizer ("cl100k_base", "qwen2", "hf:PATH",
	// "words").
	Name() string
	// Encode returns the token ids of text, with no special tokens added
	// (no BOS); special tokens written in the text (e.g. <|im_start|>) are
	// recognised as such.
	Encode(text string) []int
	// Count returns len(Encode(text)), possibly faster.
	Count(text string) int
}

// Decoder is implemented by tokenizers that can turn ids back into text
// (all but "words"); for tests and debugging. Decode is safe for
// concurrent use.
type Decoder interface {
	// Decode returns the text ids spell. A window of a longer encoding can
	// cut a UTF-8 character, and its text is then not valid UTF-8.
	Decode(ids []int) string
}

// Names of the built-in tokenizers Get resolves, besides "hf:PATH".
const (
	Words      = "words"
	Cl100kBase = "cl100k_base"
	O200kBase  = "o200k_base"
	Qwen2      = "qwen2"
)

// HFPrefix starts a name that Get resolves by loading the tokenizer.json
// file after it with LoadHF.
const HFPrefix = "hf:"

// Names returns the names Get accepts: the built-in ones and "hf:PATH".
func Names() []string {
	return []string{Words, Cl100kBase, O200kBase, Qwen2, HFPrefix + "PATH"}
}

// loaders build the built-in tokenizers.
var loaders = map[string]func() (Tokenizer, error){
	Words:      func() (Tokenizer, error) { return words{}, nil },
	Cl100kBase: func() (Tokenizer, error) { return newTiktoken(tiktoken.Cl100kBase) },
	O200kBase:  func() (Tokenizer, error) { return newTiktoken(tiktoken.O200kBase) },
	Qwen2:      func() (Tokenizer, error) { return loadQwen2() },
}

// cache holds the tokenizers Get has loaded, one entry per name (per
// absolute path for "hf:"), for the life of the process: vocabularies are
// large and immutable, so the whole program shares one copy of each.
var cache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	once sync.Once
	tok  Tokenizer
	err  error
}

// Get returns the tokenizer called name: "words", "cl100k_base",
// "o200k_base", "qwen2", or "hf:PATH" for a byte-level BPE tokenizer.json
// file (see LoadHF). Each is loaded on first use, once, and shared
// afterwards; qwen2 takes a fraction of a second to load, the tiktoken
// encodings less. Failed loads are not cached. Get is safe for concurrent
// use.
func Get(name string) (Tokenizer, error) {
	key := name
	var load func() (Tokenizer, error)
	if path, ok := strings.CutPrefix(name, HFPrefix); ok {
		if path == "" {
			return nil, fmt.Errorf("tokenizer %q: no path after %q", name, HFPrefix)
		}
		if abs, err := filepath.Abs(path); err == nil {
			key = HFPrefix + abs
		}
		load = func() (Tokenizer, error) { return LoadHF(path) }
	} else if load = loaders[name]; load == nil {
		return nil, fmt.Errorf("unknown tokenizer %q (valid: %s)", name, strings.Join(Names(), ", "))
	}

	cache.mu.Lock()
	if cache.entries == nil {
		cache.entries = make(map[string]*cacheEntry)
	}
	e := cache.entries[key]
	if e == nil {
		e = &cacheEntry{}
		cache.entries[key] = e
	}
	cache.mu.Unlock()

	e.once.Do(func() { e.tok, e.err = load() })
	if e.err != nil {
		cache.mu.Lock()
		if cache.entries[key] == e {
			delete(cache.entries, key)
		}
		cache.mu.Unlock()
		return nil, e.err
	}
	return e.tok, nil
}
