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
	doc, errs := Decode("p.yaml", []byte(src), &p, Kind{Noun: "profile"})
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
		_, errs := Decode("p.yaml", []byte(c.src), &p, Kind{Noun: "profile"})
		if len(errs) == 0 || !strings.HasPrefix(errs.Error(), c.want) {
			t.Errorf("Decode(%q) = %v, want prefix %q", c.src, errs, c.want)
		}
	}
}

// Whole-file errors name what the file should hold, and no error echoes
// more than a short piece of the file: a file that is no profile at all
// (/etc/passwd) is refused without its first line.
func TestDecodeWholeFileErrors(t *testing.T) {
	kind := Kind{Noun: "profile", Keys: "name, kind, headers"}
	long := strings.Repeat("x", 1<<20)
	cases := []struct{ name, src, want string }{
		{"empty", "", "p.yaml: empty file: want a profile mapping (name, kind, headers)"},
		{"comments only", "# nothing\n", "p.yaml: empty file: want a profile mapping (name, kind, headers)"},
		{"null document", "---\n~\n", "p.yaml:1:1: empty document: want a profile mapping (name, kind, headers)"},
		{"two documents", "name: a\n---\nname: b\n", "p.yaml:2:1: a second YAML document: a profile file holds exactly one"},
		{"passwd", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n",
			"p.yaml:1:1: not a profile file: want a mapping (name, kind, headers), got a string"},
		{"a list", "- a\n- b\n", "p.yaml:1:1: not a profile file: want a mapping (name, kind, headers), got a list"},
		{"foreign mapping", "services:\n  web: {image: secret}\nvolumes: {}\n",
			"p.yaml:1:1: not a profile file: none of its keys is a profile key (want name, kind, headers)"},
		{"long scalar", "name: [" + long + "]\n", "p.yaml:1:7: name: must be a string (got a list)"},
		{"long value", "limit: " + long + "\n", `p.yaml:1:8: limit: must be an integer (got "` + strings.Repeat("x", 80) + `"…)`},
		{"long key", "name: a\n? " + long + "\n: 1\n", "p.yaml:2:3: " + strings.Repeat("x", 80) + "…: unknown field (want one of name, extra, headers, rates, wait, limit)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p profileLike
			_, errs := Decode("p.yaml", []byte(c.src), &p, kind)
			if got := errs.Error(); got != c.want {
				t.Errorf("Decode = %.300q\nwant    %.300q", got, c.want)
			}
		})
	}
}
