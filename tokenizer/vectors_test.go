package tokenizer

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// vectorCase is one text and the ids llama.cpp's llama-server /tokenize
// returned for it with the Qwen2 vocabulary.
type vectorCase struct {
	Name string `json:"name"`
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

func loadVectors(t testing.TB) []vectorCase {
	t.Helper()
	data, err := os.ReadFile("testdata/qwen2-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []vectorCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

// differsByDesign lists the cases whose ids differ from llama.cpp's on
// purpose: llama.cpp pads the Qwen2 vocabulary with [PAD151646]...
// tokens, which tokenizer.json does not have.
var differsByDesign = map[string]bool{"pad_literal": true}

func TestQwen2Vectors(t *testing.T) {
	tok := mustGet(t, Qwen2)
	for _, c := range loadVectors(t) {
		t.Run(c.Name, func(t *testing.T) {
			got := tok.Encode(c.Text)
			if differsByDesign[c.Name] {
				if slices.Equal(got, c.IDs) {
					t.Errorf("ids equal llama.cpp's, but this case should differ (padding tokens)")
				}
				return
			}
			if !slices.Equal(got, c.IDs) {
				i := 0
				for i < len(got) && i < len(c.IDs) && got[i] == c.IDs[i] {
					i++
				}
				t.Fatalf("%d ids, want %d; first difference at %d: got %v, want %v",
					len(got), len(c.IDs), i, got[i:min(i+8, len(got))], c.IDs[i:min(i+8, len(c.IDs))])
			}
			if n := tok.Count(c.Text); n != len(c.IDs) {
				t.Errorf("Count = %d, want %d", n, len(c.IDs))
			}
			if s := tok.(Decoder).Decode(got); s != c.Text {
				t.Errorf("Decode(Encode(text)) != text")
			}
		})
	}
}

func mustGet(t testing.TB, name string) Tokenizer {
	t.Helper()
	tok, err := Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
