package prompt

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line pools of the code, json and tool-calls classes. Each pool is drawn
// once from a fixed seed (so a Builder counts each line once) and a
// request's seed then picks its lines. Every line starts with whitespace
// followed by a non-space and ends with a newline: a byte-level BPE
// pre-tokenizer then never joins two lines, nor a line and a word item,
// and the whole counts as the sum of its lines.
const (
	codeLines     = 384
	jsonLines     = 256
	toolCallLines = 256
	// maxPoolLines bounds a pool (a build shuffles it on the stack).
	maxPoolLines = 512
	// jsonOpener starts the json and tool-calls classes' text: an array,
	// so that the text begins with "[" after its leading space.
	jsonOpener = " [\n"
)

// poolSeed seeds the line pools; changing it changes every non-prose
// prompt.
const poolSeed = 0x6c696e6573 // "lines"

// ident returns an identifier of one or two vocabulary words, in
// lowerCamel, or UpperCamel when exported.
func ident(r *rand.Rand, exported bool) string {
	w := words[r.IntN(len(words))]
	if exported {
		w = upperFirst(w)
	}
	if r.IntN(2) == 0 {
		w += upperFirst(words[r.IntN(len(words))])
	}
	return w
}

func upperFirst(w string) string {
	r, size := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + w[size:]
}

// codeTemplates are Go-like lines; {a}, {b} and {c} stand for
// identifiers, {T} for an exported name, {n} for a number.
var codeTemplates = []string{
	"\t{a} := {b}({c}, {n})\n",
	"\tif {a} > {n} {\n",
	"\t\treturn {a}, nil\n",
	"\t}\n",
	"\tfor _, {a} := range {b} {\n",
	"\t\t{a}.{T}({c})\n",
	"\t{a} += {n}\n",
	"\tvar {a} []{T}\n",
	"\tdefer {a}.Close()\n",
	"\t{a}, err := {b}.{T}(ctx, {c})\n",
	"\t\t{a}[{c}] = {b}.{T}\n",
	"\tswitch {a}.{T} {\n",
	"\tcase {n}:\n",
	"\t\t{a} = append({a}, {b})\n",
	"\t// {T} keeps the {b} of each {c}.\n",
	"\t\tif {a} == nil {\n",
	"\t{a} := &{T}{{b}: {n}}\n",
}

// codePool returns the code class's lines, all different.
func codePool() []string {
	r := rand.New(rand.NewPCG(poolSeed, 1))
	return distinct(codeLines, func() string {
		t := codeTemplates[r.IntN(len(codeTemplates))]
		return strings.NewReplacer("{a}", ident(r, false), "{b}", ident(r, false), "{c}", ident(r, false),
			"{T}", ident(r, true), "{n}", strconv.Itoa(r.IntN(1000))).Replace(t)
	})
}

// distinct returns n different lines from line, in the order drawn.
func distinct(n int, line func() string) []string {
	out := make([]string, 0, n)
	seen := make(map[string]bool, n)
	for len(out) < n {
		if l := line(); !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// jsonPool returns the json class's records, all different: an id, two
// or three string fields, a number and a flag.
func jsonPool() []string {
	r := rand.New(rand.NewPCG(poolSeed, 2))
	keys := []string{"name", "city", "owner", "status", "group", "source", "kind", "title"}
	return distinct(jsonLines, func() string {
		var sb strings.Builder
		fmt.Fprintf(&sb, `  {"id": %d`, 1000+r.IntN(9000))
		for _, k := range r.Perm(len(keys))[:2+r.IntN(2)] {
			fmt.Fprintf(&sb, `, %q: %q`, keys[k], words[r.IntN(len(words))])
		}
		fmt.Fprintf(&sb, `, "score": %d.%02d, "active": %t},`+"\n", r.IntN(100), r.IntN(100), r.IntN(2) == 0)
		return sb.String()
	})
}

// toolCallPool returns the tool-calls class's calls, all different, in
// OpenAI's shape.
func toolCallPool() []string {
	r := rand.New(rand.NewPCG(poolSeed, 3))
	verbs := []string{"get", "list", "search", "update", "create", "read"}
	return distinct(toolCallLines, func() string {
		name := verbs[r.IntN(len(verbs))] + "_" + words[r.IntN(len(words))]
		args := fmt.Sprintf(`{"%s": "%s", "limit": %d}`, words[r.IntN(len(words))], words[r.IntN(len(words))], 1+r.IntN(50))
		return fmt.Sprintf(`  {"id": "call_%04x", "type": "function", "function": {"name": %q, "arguments": %q}},`+"\n",
			r.IntN(1<<16), name, args)
	})
}
