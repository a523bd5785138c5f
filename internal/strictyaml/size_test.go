package strictyaml

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type listsLike struct {
	Values []float64   `yaml:"values"`
	Lists  [][]float64 `yaml:"lists"`
}

// allocated is what f allocates, in bytes.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A list one item past MaxItems is refused before the YAML is parsed —
// at the list's position, for a few MB however long the file — whether
// written in flow or block style; one at MaxItems is counted as such.
func TestListPastTheBoundIsRefusedBeforeParsing(t *testing.T) {
	kind := Kind{Noun: "scenario", Many: "replay a trace instead"}
	flow := "values: [" + strings.Repeat("1, ", MaxItems) + "1]\n"
	block := "lists:\n  - [1]\n  -\n" + strings.Repeat("    - 2\n", MaxItems+1)
	for name, c := range map[string]struct{ src, want string }{
		"flow":  {flow, "s.yaml:1:9: a list of more than 1,000,000 items: more than a scenario holds (replay a trace instead)"},
		"block": {block, "s.yaml:4:5: a list of more than 1,000,000 items: more than a scenario holds (replay a trace instead)"},
	} {
		var errs ErrorList
		data := []byte(c.src)
		if n := allocated(func() { _, errs = Decode("s.yaml", data, &listsLike{}, kind) }); n > 4<<20 {
			t.Errorf("%s: Decode allocated %d MB before refusing", name, n>>20)
		}
		if errs.Error() != c.want {
			t.Errorf("%s: error %q, want %q", name, errs.Error(), c.want)
		}
	}
	if s := measure([]byte("values: [" + strings.Repeat("1, ", MaxItems-1) + "1]\n")); s.longest != MaxItems {
		t.Errorf("a list of MaxItems counted as %d", s.longest)
	}
}

// Many lists, each within MaxItems, past MaxNodes in all, are refused
// before parsing too.
func TestDocumentPastTheBoundIsRefusedBeforeParsing(t *testing.T) {
	list := "[" + strings.Repeat("1,", MaxItems/2) + "1]"
	var b strings.Builder
	b.WriteString("lists:\n")
	for range MaxNodes/(MaxItems/2) + 1 {
		b.WriteString("  - " + list + "\n")
	}
	var errs ErrorList
	data := []byte(b.String())
	if n := allocated(func() { _, errs = Decode("s.yaml", data, &listsLike{}, Kind{Noun: "scenario"}) }); n > 4<<20 {
		t.Errorf("Decode allocated %d MB before refusing", n>>20)
	}
	if want := "s.yaml: more than 3,000,000 values in all: more than a scenario holds"; errs.Error() != want {
		t.Errorf("error %q, want %q", errs.Error(), want)
	}
}

// Aliases cannot make the decoded document bigger than MaxNodes: an
// alias is expanded as often as it is used (here with a limit of 10,000
// for a test of milliseconds; Decode's is MaxNodes).
func TestAliasesCountAsOftenAsTheyAreUsed(t *testing.T) {
	src := []byte("values: &v [" + strings.Repeat("1,", 999) + "1]\nlists: [" + strings.Repeat("*v, ", 1000) + "*v]\n")
	var errs ErrorList
	if n := allocated(func() { _, errs = decodeAtMost("s.yaml", src, &listsLike{}, Kind{Noun: "scenario"}, 10_000) }); n > 4<<20 {
		t.Errorf("Decode allocated %d MB", n>>20)
	}
	if want := "s.yaml:1:1989: lists[8][988]: more than 10,000 values in all, aliases expanded as often as they are used"; errs.Error() != want {
		t.Errorf("error %.300q, want %q", errs.Error(), want)
	}
}

// measure's counts bound what yaml.v3 builds: at least as many nodes,
// and every list's items exactly, on every YAML file of the repository
// and on the shapes a counter could miscount.
func TestMeasureBoundsTheTree(t *testing.T) {
	docs := map[string]string{
		"block scalars":   "a: |\n  - not: an item\n  [neither, is, this]\nb: >-\n   x: y\n   - z\nc: [1, 2]\n",
		"quoted":          "a: \"x, y: [z]\"\nb: 'it''s - a, b'\nc: [\"p, q\", 'r]', s]\n\"k: 1\": v\n",
		"comments":        "a: 1 # - b: [1, 2]\n# - c\nd: [1, 2] # , 3\ne: x#y\n",
		"nested":          "- - a\n  - b\n- - c\n-\n  - d\n  - e: [1, {f: 2, g: [3, 4]}]\n",
		"indentless":      "a:\n- 1\n- 2\nb:\n  - 3\nc: 4\n",
		"flow in flow":    "a: [[1, 2], [3], [], {}, {x: 1, y}, [k: v, 5]]\n",
		"multi-line flow": "a: [1,\n  2,\n  3\n]\nb: {x: 1,\n  y: 2}\n",
		"explicit keys":   "? a\n: 1\n? [b, c]\n: 2\n",
		"anchors":         "a: &x [1, 2]\nb: *x\nc: !!str 3\nd: &y\n  - 5\n",
		"plain":           "url: http://h:8/v1\nt: 12:30\nneg: -1\nlist: [-1, -2]\n",
		"trailing comma":  "a: [1, 2, ]\n",
		"documents":       "---\na: [1]\n...\n",
		"empty values":    "a:\nb: []\nc:\n  -\n  -\n",
	}
	_ = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			if b, err := os.ReadFile(path); err == nil {
				docs[path] = string(b)
			}
		}
		return nil
	})
	for name, src := range docs {
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(src), &root); err != nil {
			continue // measure need not agree on what yaml.v3 refuses
		}
		nodes, longest := treeSize(&root)
		s := measure([]byte(src))
		if s.nodes < nodes || s.longest != longest {
			t.Errorf("%s: measured %d nodes, longest list %d; yaml.v3 built %d, longest %d", name, s.nodes, s.longest, nodes, longest)
		}
	}
}

// treeSize counts a yaml.v3 tree's nodes below the document and its longest
// list.
func treeSize(n *yaml.Node) (nodes, longest int) {
	for _, c := range n.Content {
		k, l := treeSize(c)
		nodes, longest = nodes+k+1, max(longest, l)
	}
	if n.Kind == yaml.SequenceNode {
		longest = max(longest, len(n.Content))
	}
	return nodes, longest
}

// FuzzMeasure feeds measure arbitrary bytes: it never panics, and for a
// document yaml.v3 reads its counts are never below the tree's — the
// limits it enforces cannot be slipped past. In CI it runs over its seed
// corpus; go test -fuzz FuzzMeasure ./internal/strictyaml/ explores.
func FuzzMeasure(f *testing.F) {
	for _, src := range []string{"a: [1, 2]\n", "- - a\n  - b\n", "a: |\n  - x\nb: {c: [d, e]}\n", "? [a]\n: 'b, c'\n", "a: \"x\\\n y\"\nb: [1,\n 2]\n"} {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := measure(data)
		var root yaml.Node
		if yaml.Unmarshal(data, &root) != nil {
			return
		}
		if nodes, longest := treeSize(&root); s.nodes < nodes || s.longest < longest {
			t.Fatalf("measured %d nodes, longest list %d; yaml.v3 built %d, longest %d", s.nodes, s.longest, nodes, longest)
		}
	})
}
