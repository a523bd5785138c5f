package strictyaml

import (
	"strings"
	"testing"
	"time"
)

func TestSuggest(t *testing.T) {
	keys := []string{"model", "prompt", "output", "concurrency", "kv_cache", "mix"}
	tests := map[string]string{
		"promt":      "prompt",
		"Prompt":     "prompt",
		"concurency": "concurrency",
		"kvcache":    "kv_cache",
		"outputs":    "output",
		"rate":       "",
		"x":          "",
		"modle":      "model",
	}
	for key, want := range tests {
		if got := Suggest(key, keys); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", key, got, want)
		}
	}
}

type profileLike struct {
	Name    string             `yaml:"name"`
	Extra   map[string]any     `yaml:"extra"`
	Headers map[string]string  `yaml:"headers"`
	Rates   map[string]float64 `yaml:"rates"`
	Wait    time.Duration      `yaml:"wait"`
	Limit   *int               `yaml:"limit"`
}

func TestDecodeMapsAndInterfaces(t *testing.T) {
	src := "name: x\nextra: {ignore_eos: true, top_k: 20, kw: {a: [1, 2]}}\nheaders: {X-A: b}\nrates: {cut: 0.5}\nwait: 250ms\nlimit: 3\n"
	var p profileLike
	doc, errs := Decode("p.yaml", []byte(src), &p)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if p.Extra["ignore_eos"] != true || p.Extra["top_k"] != 20 || p.Headers["X-A"] != "b" || p.Rates["cut"] != 0.5 ||
		p.Wait != 250*time.Millisecond || p.Limit == nil || *p.Limit != 3 {
		t.Fatalf("decoded %+v", p)
	}
	if !doc.Has("extra.top_k") || doc.Has("extra.nope") {
		t.Error("Has does not track map entries")
	}
}

func TestDecodeErrorsArePositioned(t *testing.T) {
	cases := []struct{ src, want string }{
		{"name: x\nnmae: y\n", "p.yaml:2:1: nmae: unknown field (did you mean \"name\"?)"},
		{"rates: {cut: lots}\n", "p.yaml:1:14: rates.cut: must be a number (got \"lots\")"},
		{"headers: [a]\n", "p.yaml:1:10: headers: must be a mapping (got a list)"},
		{"wait: 5\n", "p.yaml:1:7: wait: must be a duration with a unit"},
		{"rates: {a: 1, a: 2}\n", "p.yaml:1:15: rates.a: duplicate key (first at line 1)"},
	}
	for _, c := range cases {
		var p profileLike
		_, errs := Decode("p.yaml", []byte(c.src), &p)
		if len(errs) == 0 || !strings.HasPrefix(errs.Error(), c.want) {
			t.Errorf("Decode(%q) = %v, want prefix %q", c.src, errs, c.want)
		}
	}
}
