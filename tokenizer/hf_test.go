package tokenizer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// tinyTokenizer returns a small byte-level BPE tokenizer.json: the 256
// bytes as ids 0–255, then Ġt, he, Ġthe, aa, aaaa, abc; merges in pair
// form or as "a b" strings; two added tokens sharing a prefix.
func tinyTokenizer(t testing.TB, pairForm, ignoreMerges bool) []byte {
	t.Helper()
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(byteRune[b])] = b
	}
	for i, tok := range []string{"Ġt", "he", "Ġthe", "aa", "aaaa", "abc"} {
		vocab[tok] = 256 + i
	}
	pairs := [][2]string{{"Ġ", "t"}, {"h", "e"}, {"Ġt", "he"}, {"a", "a"}, {"aa", "aa"}}
	var merges any = pairs
	if !pairForm {
		var lines []string
		for _, p := range pairs {
			lines = append(lines, p[0]+" "+p[1])
		}
		merges = lines
	}
	f := map[string]any{
		"version": "1.0",
		"added_tokens": []map[string]any{
			{"id": 262, "content": "<|x|>", "special": true},
			{"id": 263, "content": "<|xy|>", "special": false},
		},
		"normalizer":    nil,
		"pre_tokenizer": map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
		"decoder":       map[string]any{"type": "ByteLevel"},
		"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": merges,
			"dropout": nil, "unk_token": nil, "ignore_merges": ignoreMerges},
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseHFTiny(t *testing.T) {
	cases := []struct {
		text string
		want []int
	}{
		{" the", []int{258}},
		{"the", []int{'t', 257}},
		{" t", []int{256}},
		{"aaaaa", []int{260, 'a'}},    // equal ranks merge leftmost first
		{"abc", []int{'a', 'b', 'c'}}, // no merges make abc
		{"x<|x|>y<|xy|><|x", []int{'x', 262, 'y', 263, '<', '|', 'x'}},
		{"é", []int{0xc3, 0xa9}}, // UTF-8 bytes, one token each
	}
	for _, pairForm := range []bool{false, true} {
		tok, err := ParseHF("tiny", tinyTokenizer(t, pairForm, false))
		if err != nil {
			t.Fatal(err)
		}
		if tok.VocabSize() != 264 {
			t.Errorf("VocabSize = %d, want 264", tok.VocabSize())
		}
		for _, c := range cases {
			if got := tok.Encode(c.text); !slices.Equal(got, c.want) {
				t.Errorf("pair form %v: Encode(%q) = %v, want %v", pairForm, c.text, got, c.want)
			}
			if got := tok.Decode(c.want); got != c.text {
				t.Errorf("Decode(%v) = %q, want %q", c.want, got, c.text)
			}
		}
	}
	// ignore_merges: a word in the vocabulary is one token, merges or not.
	tok, err := ParseHF("tiny", tinyTokenizer(t, true, true))
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Encode("abc"); !slices.Equal(got, []int{261}) {
		t.Errorf("ignore_merges: Encode(abc) = %v, want [261]", got)
	}
}

// qwen2JSON returns the embedded Qwen2 tokenizer.json.
func qwen2JSON(t testing.TB) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(qwen2JSONGz))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestGetHF loads the Qwen2 file from disk through Get("hf:PATH").
func TestGetHF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, qwen2JSON(t), 0o644); err != nil {
		t.Fatal(err)
	}
	tok := mustGet(t, HFPrefix+path)
	if tok.Name() != HFPrefix+path {
		t.Errorf("Name() = %q", tok.Name())
	}
	if again := mustGet(t, HFPrefix+path); again != tok {
		t.Errorf("second Get returned a different tokenizer")
	}
	qwen := mustGet(t, Qwen2)
	for _, c := range loadVectors(t) {
		if got, want := tok.Encode(c.Text), qwen.Encode(c.Text); !slices.Equal(got, want) {
			t.Errorf("%s: hf: and qwen2 encodings differ", c.Name)
		}
	}
}

func TestWithNormalization(t *testing.T) {
	var text string
	for _, c := range loadVectors(t) {
		if c.Name == "nfd_combining" {
			text = c.Text
		}
	}
	plain := mustGet(t, Qwen2)
	nfc, err := ParseHF("qwen2-nfc", qwen2JSON(t), WithNormalization())
	if err != nil {
		t.Fatal(err)
	}
	got, want := nfc.Count(text), plain.Count(norm.NFC.String(text))
	if got != want {
		t.Errorf("with NFC: %d tokens, want %d (the NFC text's)", got, want)
	}
	if got == plain.Count(text) {
		t.Errorf("with NFC: %d tokens, the same as without", got)
	}
	t.Logf("decomposed accents: %d tokens as is (llama.cpp), %d with NFC", plain.Count(text), got)
}

func TestLoadHFErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.json")
	if _, err := Get(HFPrefix + missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: error %v, want one naming %s and wrapping fs.ErrNotExist", err, missing)
	}

	byteLevel := `{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}`
	bpe := func(extra string) string {
		return `{"type": "BPE", "vocab": {"a": 0}, "merges": []` + extra + `}`
	}
	cases := []struct {
		name, json, want string
		unsupported      bool
	}{
		{"unigram", `{"model": {"type": "Unigram", "vocab": [["a", -1.0]]}, "pre_tokenizer": ` + byteLevel + `}`, `model.type "Unigram"`, true},
		{"wordpiece", `{"model": {"type": "WordPiece", "vocab": {"a": 0}}, "pre_tokenizer": ` + byteLevel + `}`, `model.type "WordPiece"`, true},
		{"metaspace", `{"model": ` + bpe("") + `, "pre_tokenizer": {"type": "Metaspace", "replacement": "▁"}}`, `pre_tokenizer "Metaspace"`, true},
		{"no pre-tokenizer", `{"model": ` + bpe("") + `, "pre_tokenizer": null}`, `missing pre_tokenizer`, true},
		{"lowercase", `{"model": ` + bpe("") + `, "normalizer": {"type": "Lowercase"}, "pre_tokenizer": ` + byteLevel + `}`, `normalizer "Lowercase"`, true},
		{"split merged", `{"model": ` + bpe("") + `, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "x"}, "behavior": "MergedWithPrevious"}, ` + byteLevel + `]}}`, `behavior "MergedWithPrevious"`, true},
		{"suffix", `{"model": ` + bpe(`, "end_of_word_suffix": "</w>"`) + `, "pre_tokenizer": ` + byteLevel + `}`, `end_of_word_suffix`, true},
		{"missing bytes", `{"model": ` + bpe("") + `, "pre_tokenizer": ` + byteLevel + `}`, `byte 0x00`, true},
		{"bad regex", `{"model": ` + bpe("") + `, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "(?<"}, "behavior": "Isolated"}, ` + byteLevel + `]}}`, `compile split pattern`, false},
		{"not JSON", `{"model": `, `invalid JSON`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Get(HFPrefix + path)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want one naming %s and saying %s", err, path, c.want)
			}
			if errors.Is(err, ErrUnsupported) != c.unsupported {
				t.Errorf("errors.Is(err, ErrUnsupported) = %v, want %v", !c.unsupported, c.unsupported)
			}
		})
	}
}
