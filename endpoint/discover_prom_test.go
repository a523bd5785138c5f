package endpoint

import (
	"maps"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestParseProm(t *testing.T) {
	type s = promSample
	l := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name string
		in   string
		want []promSample
		bad  int
	}{
		{"bare", "up 1\n", []s{{"up", nil, 1}}, 0},
		{"labels", `vllm:x{a="1",b="two"} 2.5`, []s{{"vllm:x", l("a", "1", "b", "two"), 2.5}}, 0},
		{"escapes", `m{v="a\"b\\c\nd\qe"} 1`, []s{{"m", l("v", "a\"b\\c\nd"+"qe"), 1}}, 0},
		{"a brace and comma inside a value", `m{v="}{,=",w="x"} 3`, []s{{"m", l("v", "}{,=", "w", "x"), 3}}, 0},
		{"spaces, trailing comma, timestamp", "  m { a = \"1\" , } \t 4 1712345678901\n", []s{{"m", l("a", "1"), 4}}, 0},
		{"empty label set", "m{} 5", []s{{"m", nil, 5}}, 0},
		{"special values", "a NaN\nb +Inf\nc -Inf\nd 1e+09\n", []s{{"a", nil, math.NaN()}, {"b", nil, math.Inf(1)}, {"c", nil, math.Inf(-1)}, {"d", nil, 1e9}}, 0},
		{"comments, blanks, CRLF", "# HELP m help {x=\"y\"} 1\r\n# TYPE m gauge\r\n\r\nm 6\r\n# EOF\n", []s{{"m", nil, 6}}, 0},
		{"UTF-8 name in braces", `{"my.metric",a="b"} 7`, []s{{"my.metric", l("a", "b"), 7}}, 0},
		{"quoted label name", `m{"la.bel"="v"} 8`, []s{{"m", l("la.bel", "v"), 8}}, 0},
		{"malformed lines are skipped and counted", "m{a=\"1\"\nm{a=1} 1\nm{a=\"1\"} x\nm 1 2 3\n9m 1\nm\nok 1\n{} 1\n{\"a\",\"b\"} 1\n",
			[]s{{"ok", nil, 1}}, 8},
		{"no space needed after the labels", `m{a="1"}1`, []s{{"m", l("a", "1"), 1}}, 0},
		{"unterminated escape", `m{a="x\`, nil, 1},
		{"no trailing newline", "m 1", []s{{"m", nil, 1}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, bad := parseProm([]byte(c.in), nil)
			if bad != c.bad || len(got) != len(c.want) {
				t.Fatalf("got %+v (bad %d), want %+v (bad %d)", got, bad, c.want, c.bad)
			}
			for i, w := range c.want {
				g := got[i]
				sameValue := g.value == w.value || math.IsNaN(g.value) && math.IsNaN(w.value)
				if g.name != w.name || !maps.Equal(g.labels, w.labels) || !sameValue {
					t.Errorf("sample %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestParsePromKeep(t *testing.T) {
	in := "a{x=\"1\"} 1\nb{x=\"2\"} 2\na 3\nb{x=} 4\n"
	got, bad := parseProm([]byte(in), func(n string) bool { return n == "a" })
	if len(got) != 2 || got[0].value != 1 || got[1].value != 3 {
		t.Errorf("got %+v", got)
	}
	if bad != 1 { // a rejected sample is still checked
		t.Errorf("bad = %d", bad)
	}
}

// FuzzParseProm checks that parseProm never panics and that every sample
// it returns has a name.
func FuzzParseProm(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "discovery", "vllm_metrics.txt"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{string(b), `m{a="\"",b="\\"} 1 2`, `{"x",y="z"} NaN`, "m{", `m{a="`, "#\n\n m 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, bad := parseProm([]byte(in), nil)
		if bad < 0 {
			t.Fatalf("bad = %d", bad)
		}
		for _, s := range got {
			if s.name == "" {
				t.Fatalf("sample without a name from %q", in)
			}
		}
	})
}

func BenchmarkParseVLLMMetrics(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "discovery", "vllm_metrics.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		var p partial
		if err := parseVLLMMetrics(&p, raw, "/metrics"); err != nil {
			b.Fatal(err)
		}
	}
}
