package archtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/sixpin/sixpin/"

// A rule constrains what package from (a path inside the module) may
// import. not and only are judged on everything from reaches, through any
// chain of imports; direct only on its own imports. Packages under
// internal/ may always be reached (they are leaves), and so may from's own
// subpackages. Imports of tests are not judged: a test may serve the
// simulator.
type rule struct {
	from string
	// not lists packages from must not reach.
	not []string
	// only, when set, lists every package from may reach (nil: no limit;
	// empty: the standard library, third parties and internal/ only).
	only []string
	// direct lists packages from must not import itself, though it may
	// reach them through another.
	direct []string
	why    string
}

// rules are ARCHITECTURE.md's "never" list, in the order of the flow:
// scenario → record → endpoint → runner → results → verdict → report, the harness
// on top, cmd on top of that, the simulator apart. Every package has one
// (TestEveryPackageHasARule); change them with that document.
var rules = []rule{
	{from: "internal", only: []string{},
		why: "internal/* are leaves: they import only each other, the standard library and third parties"},
	{from: "record", only: []string{},
		why: "record is the vocabulary of one request and one server sample, below everything"},
	{from: "tokenizer", only: []string{}, why: "a tokenizer counts tokens, for the client and the simulator alike"},
	{from: "prompt", only: []string{}, why: "prompt builds text of exact lengths from a token counter it is given"},
	{from: "trace", only: []string{}, why: "trace reads recorded traffic; it knows no scenario"},
	{from: "scenario", only: []string{"record", "trace"},
		why: "scenario is the start of the flow: the pins and the plan"},
	{from: "endpoint", only: []string{"record"},
		why: "endpoint is the wire: it links no collector, histogram, YAML or scenario parser"},
	{from: "runner", only: []string{"endpoint", "record", "scenario", "trace", "prompt", "tokenizer"},
		why: "runner generates load through the wire; it collects, judges and words nothing"},
	{from: "results", only: []string{"record", "scenario", "trace"},
		why: "results is data: the collector, windows, pins, merge, spill, the file; above the runner, it runs nothing"},
	{from: "waterfall", only: []string{"results", "record", "scenario", "trace"},
		why: "waterfall is data: the plan and the attribution; harness runs it, report words it"},
	{from: "verdict", only: []string{"results", "record", "scenario", "trace"},
		why: "verdict is data: comparison and gating, the registry of comparable figures; report words it"},
	{from: "capacity", only: []string{"verdict", "results", "record", "scenario", "trace"},
		why: "capacity is data: the search, the binding constraint and the sixpin/capacity/v1 file; harness runs its points, report words it"},
	{from: "export", only: []string{"capacity", "verdict", "results", "record", "scenario", "trace"},
		why: "export writes the formats other tools read (per-request rows, the llm-d Benchmark Report) from data; it runs and words nothing"},
	{from: "analyze", only: []string{"results", "record", "scenario", "trace"},
		why: "analyze reads agent logs into data; report words it"},
	{from: "importer", only: []string{"scenario", "record", "trace"},
		why: "importer translates another tool's invocation into a scenario; it runs nothing"},
	{from: "profiles", not: []string{"sim", "runner", "harness", "report"},
		why: "a client-side profile describes a target; it does not link the simulator or run load"},
	{from: "report", not: []string{"runner", "harness", "sim"}, direct: []string{"endpoint"},
		why: "report renders results files; it runs nothing (it reaches the wire's protocol names only through profiles)"},
	{from: "sim", only: []string{"tokenizer"},
		why: "the simulator shares nothing with the client side but the tokenizer"},
	{from: "harness/internal/live", only: []string{}, why: "the live page serves what it is given"},
	{from: "harness/internal/coord", only: []string{},
		why: "the coordination of a sharded capacity search carries records and results as bytes it is given"},
	{from: "harness/internal/exposition", only: []string{"results", "record", "scenario", "trace"},
		why: "sixpin's own Prometheus exposition folds records it is given"},
	{from: "cmd/sixpin/internal/kube", not: []string{"harness", "runner", "report", "sim"},
		why: "kube writes manifests from a scenario and a profile; it runs nothing"},
	{from: "harness", not: []string{"cmd/sixpin"}, why: "the harness composes a run; cmd drives it"},
	{from: "cmd/sixpin", direct: []string{"runner", "endpoint", "record"},
		why: "cmd is thin: it reaches the runner and the wire through the harness"},
	{from: "benchmarks", only: []string{}, why: "the benchmarks drive the sixpin binary from outside"},
	{from: "analyze/opencodetest", only: []string{}, why: "a test helper that writes opencode logs"},
}

// Rules for every package at once.
var (
	// nobody may import cmd.
	top = "cmd/sixpin"
	// simUsers may reach sim: they start it.
	simUsers = []string{"harness", "cmd/sixpin", "sim"}
)

func under(p, root string) bool { return p == root || strings.HasPrefix(p, root+"/") }

// ruleFor is the rule for pkg: the one for the longest from that pkg is
// under.
func ruleFor(pkg string) (rule, bool) {
	best, found := rule{}, false
	for _, r := range rules {
		if under(pkg, r.from) && (!found || len(r.from) > len(best.from)) {
			best, found = r, true
		}
	}
	return best, found
}

// reach returns every package pkg imports through any chain, with the
// chain that first reached it ("a → b → c").
func reach(graph map[string][]string, pkg string) map[string]string {
	via := map[string]string{}
	queue := []string{pkg}
	path := map[string]string{pkg: pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, imp := range graph[p] {
			if _, seen := path[imp]; seen {
				continue
			}
			path[imp] = path[p] + " → " + imp
			via[imp] = path[imp]
			queue = append(queue, imp)
		}
	}
	return via
}

// violations returns every arrow in graph (package → its imports, both
// relative to the module) that a rule forbids, with the chain that makes
// it.
func violations(graph map[string][]string) []string {
	var out []string
	for pkg, imports := range graph {
		if slices.Contains(imports, top) {
			out = append(out, fmt.Sprintf("%s imports %s: cmd is the top, nothing imports it", pkg, top))
		}
		if slices.Contains(imports, "sim") && !slices.ContainsFunc(simUsers, func(u string) bool { return under(pkg, u) }) {
			out = append(out, fmt.Sprintf("%s imports sim: only the harness and cmd start the simulator", pkg))
		}
		r, ok := ruleFor(pkg)
		if !ok {
			continue
		}
		for _, imp := range imports {
			if slices.ContainsFunc(r.direct, func(d string) bool { return under(imp, d) }) {
				out = append(out, fmt.Sprintf("%s imports %s: %s", pkg, imp, r.why))
			}
		}
		for dep, chain := range reach(graph, pkg) {
			switch {
			case slices.ContainsFunc(r.not, func(n string) bool { return under(dep, n) }):
			case r.only != nil && !under(dep, "internal") && !under(dep, r.from) &&
				!slices.ContainsFunc(r.only, func(o string) bool { return under(dep, o) }):
			default:
				continue
			}
			out = append(out, fmt.Sprintf("%s reaches %s (%s): %s", pkg, dep, chain, r.why))
		}
	}
	slices.Sort(out)
	return out
}

// graph lists the module's packages and their non-test imports inside the
// module, with go list.
func graph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	g := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(f[0], module)
		g[pkg] = nil
		for _, imp := range f[1:] {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				g[pkg] = append(g[pkg], rel)
			}
		}
	}
	return g
}

func TestImportRules(t *testing.T) {
	g := graph(t)
	for _, want := range []string{"record", "scenario", "endpoint", "runner", "results", "report", "harness", "sim", "profiles", "cmd/sixpin"} {
		if _, ok := g[want]; !ok {
			t.Errorf("go list does not list %s: the rules would judge nothing", want)
		}
	}
	for _, v := range violations(g) {
		t.Error(v)
	}
}

// Every package is judged by a rule of its own (or its parent's), and
// every rule judges a package that exists.
func TestEveryPackageHasARule(t *testing.T) {
	g := graph(t)
	for pkg := range g {
		if _, ok := ruleFor(pkg); !ok {
			t.Errorf("package %s has no rule: add one to rules and to ARCHITECTURE.md", pkg)
		}
	}
	for _, r := range rules {
		judged := false
		for pkg := range g {
			judged = judged || under(pkg, r.from)
		}
		if !judged {
			t.Errorf("the rule for %s judges no package", r.from)
		}
	}
}

// The rules catch each kind of forbidden arrow, direct and through a
// chain, and let the flow's arrows pass.
func TestRulesRejectForbiddenArrows(t *testing.T) {
	for _, g := range []map[string][]string{
		{"report": {"cmd/sixpin"}},
		{"results": {"report"}},
		{"runner": {"report"}},
		{"runner": {"results"}},
		{"endpoint": {"results"}},
		{"endpoint": {"scenario"}},
		{"record": {"scenario"}},
		{"sim": {"results"}},
		{"sim": {"tokenizer"}, "tokenizer": {"results"}}, // through a chain
		{"profiles": {"sim"}},
		{"analyze": {"sim"}},
		{"endpoint": {"runner"}},
		{"scenario": {"results"}},
		{"cmd/sixpin/internal/kube": {"harness"}},
		{"cmd/sixpin/internal/kube": {"cmd/sixpin"}},
		{"results": {"cmd/sixpin/internal/kube"}},
		{"cmd/sixpin": {"endpoint"}},
		{"cmd/sixpin": {"runner"}},
		{"internal/numfmt": {"results"}},
		{"internal/h1": {"record"}},
		{"report": {"profiles"}, "profiles": {"runner"}}, // through a chain
		{"harness/internal/live": {"results"}},
		{"harness/internal/coord": {"record"}},
		{"harness/internal/exposition": {"runner"}},
		{"verdict": {"report"}},
		{"verdict": {"harness"}},
	} {
		if v := violations(g); len(v) == 0 {
			t.Errorf("%v passes the rules", g)
		}
	}
	for _, g := range []map[string][]string{
		{"harness": {"sim"}}, {"cmd/sixpin": {"sim"}}, {"cmd/sixpin": {"harness"}, "harness": {"runner"}},
		{"runner": {"record"}}, {"report": {"results"}}, {"sim": {"tokenizer"}}, {"sim": {"internal/numfmt"}},
		{"results": {"scenario"}}, {"endpoint": {"record"}}, {"internal/strictyaml": {"internal/clip"}},
		{"report": {"profiles"}, "profiles": {"endpoint"}}, {"report": {"verdict"}}, {"verdict": {"results"}},
		{"cmd/sixpin": {"cmd/sixpin/internal/kube"}}, {"harness": {"harness/internal/exposition"}},
	} {
		if v := violations(g); len(v) > 0 {
			t.Errorf("an allowed arrow is refused: %v", v)
		}
	}
}
