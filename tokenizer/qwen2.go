package tokenizer

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
)

// qwen2JSONGz is the Qwen2 tokenizer.json (151,643 tokens, 151,387 merges,
// the special tokens <|endoftext|>, <|im_start|> and <|im_end|>), rebuilt
// from llama.cpp's Qwen2 vocabulary; its whitespace compacted (json.Compact,
// same JSON) and gzip-compressed: 1.8 MB instead of 7 MB.
//
//go:embed qwen2.json.gz
var qwen2JSONGz []byte

// loadQwen2 decompresses and parses the embedded Qwen2 tokenizer.
func loadQwen2() (*BPE, error) {
	zr, err := gzip.NewReader(bytes.NewReader(qwen2JSONGz))
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %q: %w", "qwen2", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %q: %w", "qwen2", err)
	}
	return ParseHF("qwen2", data)
}
