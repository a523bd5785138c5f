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

// A rule forbids package From (a path inside the module; "" for every
// package) to import any of Not, or anything but Only when Only is set.
// A rule on a package holds for the packages under it too (its rooms,
// such as harness/internal/live), and a package may always import its
// own rooms. Imports of tests are not judged: a test may serve the
// simulator.
type rule struct {
	from string
	not  []string
	only []string
	why  string
}

// rules are the data flow of STYLE.md §4: scenario → endpoint → runner →
// results → report, the harness on top, cmd on top of that; the simulator
// apart.
var rules = []rule{
	{from: "", not: []string{"cmd/sixpin"}, why: "cmd is the top: nothing imports it"},
	{from: "results", not: []string{"report", "runner", "endpoint", "harness", "sim", "profiles", "analyze"},
		why: "results is data: records, collector, windows, verdicts, the file; no renderer"},
	{from: "record", only: []string{},
		why: "record is the vocabulary of one request and one server sample: the standard library only"},
	{from: "runner", not: []string{"results", "report", "harness", "sim", "analyze"},
		why: "runner generates load; words and composition live elsewhere"},
	{from: "endpoint", not: []string{"results", "scenario", "runner", "report", "harness", "sim", "analyze"},
		why: "endpoint is the server on the other side, below the runner"},
	{from: "scenario", not: []string{"endpoint", "runner", "results", "report", "harness", "sim", "profiles"},
		why: "scenario is the start of the flow"},
	{from: "report", not: []string{"runner", "endpoint", "harness", "sim"},
		why: "report renders results files; it runs nothing"},
	{from: "profiles", not: []string{"sim", "runner", "harness", "report"},
		why: "a client-side profile does not link the simulator"},
	{from: "waterfall", not: []string{"report", "runner", "endpoint", "harness", "sim", "profiles"},
		why: "waterfall is data: the plan and the attribution; harness runs it, report words it"},
	{from: "sim", only: []string{"tokenizer"},
		why: "the simulator shares nothing with the client side but the tokenizer"},
	{from: "*", not: []string{"sim"}, why: "only the harness (and cmd, and tests) start the simulator"},
}

// simUsers may import sim: they start it.
var simUsers = []string{"harness", "cmd/sixpin", "sim"}

// violations returns every import in graph (package → its imports, both
// relative to the module) that a rule forbids.
func violations(graph map[string][]string) []string {
	var out []string
	for pkg, imports := range graph {
		for _, imp := range imports {
			for _, r := range rules {
				if msg, ok := r.forbids(pkg, imp); ok {
					out = append(out, fmt.Sprintf("%s imports %s: %s", pkg, imp, msg))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func (r rule) forbids(pkg, imp string) (string, bool) {
	under := func(p, root string) bool { return p == root || strings.HasPrefix(p, root+"/") }
	switch {
	case under(imp, pkg):
		return "", false // a room of pkg's own
	case r.from == "*":
		if slices.Contains(r.not, imp) && !slices.ContainsFunc(simUsers, func(u string) bool { return under(pkg, u) }) {
			return r.why, true
		}
		return "", false
	case r.from != "" && !under(pkg, r.from):
		return "", false
	}
	if r.only != nil && !slices.Contains(r.only, imp) && !strings.HasPrefix(imp, "internal/") {
		return r.why, true
	}
	if slices.ContainsFunc(r.not, func(n string) bool { return under(imp, n) }) {
		return r.why, true
	}
	return "", false
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
	for _, want := range []string{"scenario", "endpoint", "runner", "results", "report", "harness", "sim", "profiles", "cmd/sixpin"} {
		if _, ok := g[want]; !ok {
			t.Errorf("go list does not list %s: the rules would judge nothing", want)
		}
	}
	for _, v := range violations(g) {
		t.Error(v)
	}
}

// The rules catch each kind of forbidden arrow.
func TestRulesRejectForbiddenArrows(t *testing.T) {
	for _, edge := range [][2]string{
		{"report", "cmd/sixpin"},
		{"results", "report"},
		{"runner", "report"},
		{"sim", "results"},
		{"profiles", "sim"},
		{"analyze", "sim"},
		{"endpoint", "runner"},
		{"scenario", "results"},
		{"endpoint", "results"},
		{"runner", "results"},
		{"record", "scenario"},
		{"results", "cmd/sixpin/internal/kube"},
		{"cmd/sixpin/internal/kube", "cmd/sixpin"},
	} {
		if v := violations(map[string][]string{edge[0]: {edge[1]}}); len(v) == 0 {
			t.Errorf("%s → %s passes the rules", edge[0], edge[1])
		}
	}
	for _, edge := range [][2]string{
		{"harness", "sim"}, {"cmd/sixpin", "sim"}, {"runner", "record"}, {"report", "results"},
		{"sim", "tokenizer"}, {"sim", "internal/numfmt"}, {"results", "scenario"}, {"endpoint", "record"},
		{"cmd/sixpin", "cmd/sixpin/internal/kube"}, {"harness", "harness/internal/exposition"},
	} {
		if v := violations(map[string][]string{edge[0]: {edge[1]}}); len(v) > 0 {
			t.Errorf("an allowed arrow is refused: %v", v)
		}
	}
}
