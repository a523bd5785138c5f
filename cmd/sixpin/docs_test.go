package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/sixpin/sixpin/harness"
	"github.com/sixpin/sixpin/internal/fielderr"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/verdict"
)

// The documents whose examples TestDocs keeps true, relative to the
// repository's root.
var docGlobs = []string{"README.md", "docs/*.md"}

// fragmentMarker, a comment line in a ```yaml block, marks a piece of a
// scenario or profile that does not stand alone (a key shown in
// isolation); such a block is not validated.
const fragmentMarker = "# fragment"

// TestDocs keeps the README's and docs/'s examples true: every sixpin
// command line shown in a shell block parses against the real command
// tree (its subcommand and every flag exist, every flag value has its
// flag's type), and every ```yaml block that is a scenario, a profile or
// gate rules passes the loader sixpin itself uses, strictly.
func TestDocs(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	var files []string
	for _, g := range docGlobs {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 2 {
		t.Fatalf("found %d documents under %s; want the README and docs/", len(files), root)
	}
	var commands, yamls int
	for _, file := range files {
		rel, _ := filepath.Rel(root, file)
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range codeBlocks(string(data)) {
				if b.lang == "yaml" {
					if checkYAMLBlock(t, root, rel, b) {
						yamls++
					}
					continue
				}
				for _, c := range commandLines(b) {
					commands++
					if err := parseCommand(c.args); err != nil {
						t.Errorf("%s:%d: %s\n\t%v", rel, c.line, c.text, err)
					}
				}
			}
		})
	}
	// A parser that found nothing would pass every document.
	if commands < 50 || yamls < 5 {
		t.Errorf("checked %d command lines and %d YAML blocks; the documents hold more", commands, yamls)
	}
	t.Logf("checked %d sixpin command lines and %d YAML blocks in %d documents", commands, yamls, len(files))
}

// A codeBlock is one fenced block of a Markdown document.
type codeBlock struct {
	lang  string   // the info string's first word: sh, console, yaml, … ("" for none)
	line  int      // the line of the block's first content line (1-based)
	lines []string // the content, fences excluded
}

// codeBlocks returns the fenced (```) blocks of a Markdown document.
func codeBlocks(doc string) []codeBlock {
	var (
		blocks []codeBlock
		cur    *codeBlock
	)
	for i, l := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(l)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			lang, _, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), " ")
			cur = &codeBlock{lang: lang, line: i + 2}
		case cur != nil && trimmed == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, l)
		}
	}
	return blocks
}

// A commandLine is one sixpin invocation shown in a document.
type commandLine struct {
	line int      // where it starts
	text string   // as shown, continuations joined
	args []string // the words after "sixpin"
}

// commandLines returns the sixpin invocations of a block. In a shell
// block (sh, bash, shell) every line is a command; in any other block
// but YAML and JSON (console, text, none) only lines after a "$ " prompt
// are, the rest being output. A line ending in \ continues on the next.
// A line may hold several commands (&&, ||, |, ;); those whose first
// word, after VAR=value assignments, is sixpin (or bin/sixpin) count.
func commandLines(b codeBlock) []commandLine {
	shell := b.lang == "sh" || b.lang == "bash" || b.lang == "shell"
	if !shell && b.lang != "console" && b.lang != "text" && b.lang != "" {
		return nil
	}
	var out []commandLine
	for i := 0; i < len(b.lines); i++ {
		start := i
		l := strings.TrimSpace(b.lines[i])
		prompted := strings.HasPrefix(l, "$ ")
		if !shell && !prompted {
			continue
		}
		l = strings.TrimPrefix(l, "$ ")
		for strings.HasSuffix(l, "\\") && i+1 < len(b.lines) {
			i++
			l = strings.TrimSuffix(l, "\\") + " " + strings.TrimSpace(b.lines[i])
		}
		for _, cmd := range splitShell(l) {
			for len(cmd) > 0 && isAssignment(cmd[0]) {
				cmd = cmd[1:]
			}
			if len(cmd) == 0 || (cmd[0] != "sixpin" && cmd[0] != "bin/sixpin" && cmd[0] != "./bin/sixpin") {
				continue
			}
			out = append(out, commandLine{line: b.line + start, text: l, args: cmd[1:]})
		}
	}
	return out
}

// isAssignment reports whether w is a shell assignment, NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" || strings.HasPrefix(w, "-") {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// splitShell splits a shell line into its simple commands' words, as far
// as documents need: quotes ('…', "…") and $(…) keep a word whole, a # at
// a word's start begins a comment, &&, ||, |, ; and a trailing & separate
// commands, and a redirection (>, >>, <, 2>, 2>&1) is dropped with its
// target.
func splitShell(s string) [][]string {
	var (
		cmds  [][]string
		words []string
		w     strings.Builder
		inW   bool
		depth int // inside $( … )
	)
	flushWord := func() {
		if inW {
			words = append(words, w.String())
		}
		w.Reset()
		inW = false
	}
	flushCmd := func() {
		flushWord()
		words = dropRedirections(words)
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case depth > 0:
			w.WriteByte(c)
			if c == '(' {
				depth++
			} else if c == ')' {
				depth--
			}
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			inW = true
			depth = 1
			w.WriteString("$(")
			i++
		case c == '\'' || c == '"':
			inW = true
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == ' ' || c == '\t':
			flushWord()
		case c == '#' && !inW:
			flushCmd()
			return cmds
		case c == ';' || c == '|' || c == '&':
			if c == '&' && w.String() == "2>" {
				w.WriteByte(c) // 2>&1
				continue
			}
			flushCmd()
			if i+1 < len(s) && (s[i+1] == '|' || s[i+1] == '&') {
				i++
			}
		default:
			inW = true
			w.WriteByte(c)
		}
	}
	flushCmd()
	return cmds
}

// dropRedirections removes redirections and their targets from words.
func dropRedirections(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		op := strings.TrimLeft(w, "012")
		switch {
		case op == ">" || op == ">>" || op == "<":
			i++ // the target is the next word
		case strings.HasPrefix(op, ">") || strings.HasPrefix(op, "<"):
			// >file, 2>&1: the target is in the word
		default:
			out = append(out, w)
		}
	}
	return out
}

// parseCommand finds the command args name in sixpin's command tree and
// parses its flags as cobra would, without running it: an unknown
// subcommand or flag, or a flag value its flag cannot take, is an error.
func parseCommand(args []string) error {
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		Getenv: func(string) string { return "" },
		Hard:   context.Background(),
	}
	root := NewCmdRoot(f)
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd.HasSubCommands() {
		// A group (sixpin, sixpin kube, …) runs nothing itself: a word
		// left after it is a subcommand that does not exist.
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") {
				return fmt.Errorf("unknown command %q for %q", a, cmd.CommandPath())
			}
		}
	}
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	return nil
}

// checkYAMLBlock validates a ```yaml block with sixpin's own strict
// loader when it is a scenario, a profile or gate rules, and reports
// whether it checked it. Its errors are reported at the document's
// lines. A block whose first line is a comment naming a file of the
// repository (# scenarios/x.yaml) is read as that file, so that the paths
// it holds resolve as they do there; any other as if it sat beside the
// document. A trace file the block names that the repository does not
// hold (the reader's own) is not checked.
func checkYAMLBlock(t *testing.T, root, doc string, b codeBlock) bool {
	t.Helper()
	src := strings.Join(b.lines, "\n") + "\n"
	if slices.ContainsFunc(b.lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), fragmentMarker) }) {
		return false
	}
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(src), &node); err != nil {
		t.Errorf("%s:%d: a yaml block that is not YAML: %v", doc, b.line, err)
		return false
	}
	keys := topKeys(&node)
	path := filepath.Join(root, filepath.Dir(doc), "example.yaml")
	if first := strings.TrimSpace(b.lines[0]); strings.HasPrefix(first, "# ") {
		named := strings.Fields(strings.TrimPrefix(first, "# "))[0]
		if _, err := os.Stat(filepath.Join(root, named)); err == nil && strings.HasSuffix(named, ".yaml") {
			path = filepath.Join(root, named)
		}
	}
	var err error
	switch {
	case keys["pins"] || keys["workload"] || keys["sweep"]:
		_, err = scenario.Parse(path, []byte(src))
	case keys["base_url"] || keys["kind"] && !keys["apiVersion"]:
		var p *profiles.Profile
		if p, err = profiles.Parse(path, []byte(src)); err == nil && p.Simulated() {
			_, err = harness.SimConfig(p) // the sim: section, as a run reads it
		}
	case len(keys) > 0 && allKeys(keys, func(k string) bool { return strings.Count(k, ".") >= 1 && !strings.Contains(k, " ") }):
		_, err = verdict.ParseRules(path, []byte(src))
	default:
		return false // another tool's YAML: a workflow, a Prometheus config, …
	}
	var list fielderr.List
	if errors.As(err, &list) {
		for _, e := range list {
			if e.Field == "workload.file" && strings.Contains(e.Msg, "no such file") {
				t.Logf("%s:%d: the trace the example names is the reader's own: %v", doc, b.line, e)
				continue
			}
			line := b.line
			if e.Line > 0 {
				line += e.Line - 1
			}
			t.Errorf("%s:%d: %s", doc, line, fielderr.Format("", 0, 0, e.Field, e.Msg))
		}
	} else if err != nil {
		t.Errorf("%s:%d: %v", doc, b.line, err)
	}
	return true
}

// topKeys returns the keys of a YAML document's top-level mapping.
func topKeys(n *yaml.Node) map[string]bool {
	keys := map[string]bool{}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return keys
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys[n.Content[i].Value] = true
	}
	return keys
}

// allKeys reports whether every key satisfies ok.
func allKeys(keys map[string]bool, ok func(string) bool) bool {
	for k := range keys {
		if !ok(k) {
			return false
		}
	}
	return true
}

// TestDocsListEveryProfile keeps the documents' lists of profiles whole:
// docs/targets.md names every embedded profile, and docs/simulator.md
// every simulator profile.
func TestDocsListEveryProfile(t *testing.T) {
	t.Parallel()
	all, err := profiles.List()
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "..", "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	targets, simulator := read("targets.md"), read("simulator.md")
	for _, p := range all {
		if !strings.Contains(targets, "| `"+p.Name+"`") {
			t.Errorf("docs/targets.md: the profile table has no row for %s", p.Name)
		}
		if p.Simulated() && !strings.Contains(simulator, "| `"+p.Name+"`") {
			t.Errorf("docs/simulator.md: the profile table has no row for %s", p.Name)
		}
	}
}

// splitShell reads the shell of the documents' command lines as a shell
// would, as far as TestDocs needs.
func TestDocsSplitShell(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line string
		want [][]string
	}{
		{"sixpin run a.yaml -o r.json", [][]string{{"sixpin", "run", "a.yaml", "-o", "r.json"}}},
		{"sixpin run a.yaml   # a comment --nope", [][]string{{"sixpin", "run", "a.yaml"}}},
		{"sixpin capacity s.yaml --tier 'tight: ttft_ms.p90<=3000, error_rate<=5%'",
			[][]string{{"sixpin", "capacity", "s.yaml", "--tier", "tight: ttft_ms.p90<=3000, error_rate<=5%"}}},
		{`sixpin report r.json --format md >> "$GITHUB_STEP_SUMMARY"`, [][]string{{"sixpin", "report", "r.json", "--format", "md"}}},
		{"sixpin analyze opencode --export-scenario p.yaml && sixpin validate p.yaml",
			[][]string{{"sixpin", "analyze", "opencode", "--export-scenario", "p.yaml"}, {"sixpin", "validate", "p.yaml"}}},
		{"kubectl logs -l x=y --tail=-1 | sixpin kube collect -d shards",
			[][]string{{"kubectl", "logs", "-l", "x=y", "--tail=-1"}, {"sixpin", "kube", "collect", "-d", "shards"}}},
		{"sixpin sim --addr 127.0.0.1:18123 &", [][]string{{"sixpin", "sim", "--addr", "127.0.0.1:18123"}}},
		{"sixpin run a.yaml 2>&1 | tee log", [][]string{{"sixpin", "run", "a.yaml"}, {"tee", "log"}}},
		{"sixpin run c.yaml --shard $(JOB_COMPLETION_INDEX)/4 --start-at $T",
			[][]string{{"sixpin", "run", "c.yaml", "--shard", "$(JOB_COMPLETION_INDEX)/4", "--start-at", "$T"}}},
		{"T=$(( $(date +%s) + 60 ))     # every shard starts at once", [][]string{{"T=$(( $(date +%s) + 60 ))"}}},
	} {
		t.Run(c.line, func(t *testing.T) {
			t.Parallel()
			if got := splitShell(c.line); !slices.EqualFunc(got, c.want, slices.Equal) {
				t.Errorf("splitShell(%q)\n got %q\nwant %q", c.line, got, c.want)
			}
		})
	}
}
