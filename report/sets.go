package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/verdict"
	"github.com/sixpin/sixpin/waterfall"
)

// File is one file given to report, compare or gate: a results file (Run),
// a set file (Set) or a waterfall (Waterfall).
type File struct {
	Name      string
	Run       *results.Run
	Set       *results.Set
	Waterfall *waterfall.File
	Capacity  *capacity.File
}

// LoadFiles reads results and set files, each refused with file:line:col
// when sixpin did not write it whole (every run of a set checked as a
// results file is).
func LoadFiles(paths ...string) ([]File, error) {
	fs := make([]File, 0, len(paths))
	for _, p := range paths {
		if isCapacity(p) {
			cf, err := capacity.ReadFile(p)
			if err != nil {
				return nil, err
			}
			fs = append(fs, File{Name: p, Capacity: cf})
			continue
		}
		if isWaterfall(p) {
			wf, err := waterfall.ReadFile(p)
			if err != nil {
				return nil, err
			}
			fs = append(fs, File{Name: p, Waterfall: wf})
			continue
		}
		run, set, err := results.ReadAnyFile(p)
		if err != nil {
			return nil, err
		}
		fs = append(fs, File{Name: p, Run: run, Set: set})
	}
	return fs, nil
}

// GateInput is what gate judges, sorted from the files it was given:
// samples of runs (Baseline and Current), or sets gated point by point
// (BaselineSets and CurrentSet).
type GateInput struct {
	Baseline, Current verdict.Sample
	BaselineSets      []verdict.SetInput
	CurrentSet        *verdict.SetInput
}

// SortGateFiles sorts the files given to gate: baseline, named baseName,
// and current. Results files and repeat sets are samples of runs — every
// baseline file's runs form the baseline sample, a repeat set's runs are
// named FILE#seed=N — so several reruns, or a --repeat set, are one
// baseline. Sweeps and bake-offs are gated point by point, and then every
// file must be a set (several baseline sets give several runs at each
// point). Waterfalls are refused.
func SortGateFiles(baseName string, baseline []File, current File) (GateInput, error) {
	var in GateInput
	all := append(append([]File(nil), baseline...), current)
	var run, set *File
	for i, f := range all {
		switch {
		case f.Waterfall != nil:
			return in, fmt.Errorf("%s is a waterfall: gate takes results and set files (`sixpin report` renders a waterfall)", f.Name)
		case f.Capacity != nil:
			return in, fmt.Errorf("%s is a capacity file: gate takes results and set files (`sixpin report` renders a capacity search)", f.Name)
		case f.Set == nil:
			run = &all[i]
		case f.Set.Kind != results.SetRepeat:
			set = &all[i]
		}
	}
	if set != nil {
		if run != nil {
			return in, fmt.Errorf("%s is a set of runs and %s one run: gate sets with sets, results files with results files", set.Name, run.Name)
		}
		for _, f := range baseline {
			in.BaselineSets = append(in.BaselineSets, verdict.SetInput{Name: f.Name, Set: f.Set})
		}
		in.CurrentSet = &verdict.SetInput{Name: current.Name, Set: current.Set}
		return in, nil
	}
	in.Baseline.Name = baseName
	for _, f := range baseline {
		in.Baseline.Runs = append(in.Baseline.Runs, fileRuns(f)...)
	}
	in.Current = verdict.Sample{Name: current.Name, Runs: fileRuns(current)}
	return in, nil
}

// fileRuns are a results file's run, or a repeat set's runs named
// FILE#seed=N.
func fileRuns(f File) []Input {
	if f.Set == nil {
		return []Input{{Name: f.Name, Run: f.Run}}
	}
	return pointInputs(SetInput{Name: f.Name, Set: f.Set})
}

// pointInputs are a set's runs as results files named by their points
// ("sweep.json#concurrency.streams=4"), for the formats with a row or a
// suite per run (CSV, JUnit).
func pointInputs(in SetInput) []Input {
	var ins []Input
	for _, p := range verdict.Points(in.Set) {
		ins = append(ins, Input{Name: in.Name + "#" + p.Key, Run: p.Run})
	}
	return ins
}

// RenderSet writes in in format f: text and md as `sixpin run` and
// bakeoff print it (the pins the points share, a row per point, a
// repeat's means with intervals, a bake-off's usable view), html as one
// self-contained page with the tables and charts of labelled points, csv
// and junit as the runs' own rows and suites named by their points.
func RenderSet(w io.Writer, f Format, in SetInput) error {
	switch f {
	case FormatMarkdown:
		return WriteSetText(w, in.Set, true)
	case FormatHTML:
		return WriteSetHTML(w, in.Set)
	case FormatCSV:
		return WriteCSV(w, pointInputs(in))
	case FormatJUnit:
		return WriteJUnit(w, pointInputs(in))
	}
	return WriteSetText(w, in.Set, false)
}

// setWords names a set's kind and its members as kindWords does, but a
// bake-off that ran each profile more than once holds runs.
func setWords(set *results.Set) (title, members string) {
	title, members = kindWords(set.Kind)
	if set.Kind == results.SetBakeoff && bakeoffRepeats(set) > 1 {
		members = "runs"
	}
	return title, members
}

// kindWords names a set's kind and its members: "sweep", "points".
func kindWords(kind string) (title, members string) {
	switch kind {
	case results.SetSweep:
		return "sweep", "points"
	case results.SetBakeoff:
		return "bake-off", "profiles"
	}
	return "repeats", "runs"
}

// headline is one run's figures in a set's tables: its headline window
// (steady), or the whole run when the steady window has no success.
type headline struct {
	window                string
	requests, ok          int
	aggregate, inFlight   float64
	perStream             float64
	decode, effective     float64
	ttft, ttftP99, tpot   float64
	e2e, e2eP99           float64
	promptP50             float64
	errorRate, rate429    float64
	valid                 bool
	lifetimeMin           float64
	costHour, costMOutput float64
	// costSession is $ per agentic session; costAgentHour $ per hour of
	// one closed-loop stream or agent (the run's $/hour over its declared
	// streams); 0 when unknown.
	costSession, costAgentHour float64
}

func headlineOf(r *results.Run) headline {
	name := r.Headline
	w := r.Windows[name]
	if w == nil || w.Completed == 0 {
		name, w = results.WindowAll, r.Windows[results.WindowAll]
	}
	h := headline{window: name, valid: r.Valid && !r.Incomplete, errorRate: r.Errors.Rate}
	if w != nil {
		h.requests, h.ok = w.Requests, w.Completed
		h.aggregate, h.inFlight, h.perStream = w.AggregateOutputTokS, w.MeanInFlight, w.AggregatePerStreamTokS
		h.decode, h.effective = p50(w.DecodeTokS), p50(w.EffectiveTokS)
		h.ttft, h.tpot = p50(w.TTFTMs), p50(w.TPOTMs)
		if w.TTFTMs != nil {
			h.ttftP99 = w.TTFTMs.P99
		}
		h.e2e, h.e2eP99 = p50(w.E2EMs), math.NaN()
		if w.E2EMs != nil {
			h.e2eP99 = w.E2EMs.P99
		}
		if w.PromptTokens != nil {
			h.promptP50 = w.PromptTokens.P50
		}
	}
	if n := r.Errors.Requests; n > 0 {
		h.rate429 = float64(r.Errors.ByClass[string(record.ErrHTTP429)]) / float64(n)
	}
	if r.Sessions != nil && r.Sessions.LifetimeMin != nil {
		h.lifetimeMin = r.Sessions.LifetimeMin.P50
	}
	if c := r.Cost; c != nil {
		h.costHour, h.costMOutput, h.costSession = c.PerHourUSD, c.PerMOutputTokensUSD, c.PerSessionUSD
		if n := r.Pins.Concurrency.Declared.Streams; n > 0 && r.Pins.Concurrency.Declared.Mode == scenario.ModeClosed {
			h.costAgentHour = c.PerHourUSD / float64(n)
		}
	}
	return h
}

func p50(d *results.Dist) float64 {
	if d == nil {
		return math.NaN()
	}
	return d.P50
}

// cell formats a figure, or "–" when there is none (not a finite
// number).
func cell(v float64) string {
	if !finite(v) {
		return "–"
	}
	return num(v)
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

// setTable is one table of a set's report, in plain cells; text, Markdown
// and HTML each lay it out.
type setTable struct {
	// title heads the table: text prints it with a colon, Markdown as a
	// heading, HTML as one.
	title string
	head  []string
	rows  [][]string
	// text marks the columns HTML lays out as wrapping text rather
	// than numbers (the first always is).
	text map[int]bool
}

// write lays t out as aligned text or a Markdown table.
func (t setTable) write(p *numfmt.Printer, md bool) {
	if t.title != "" {
		if md {
			p.F("## %s\n\n", t.title)
		} else {
			p.F("%s:\n", t.title)
		}
	}
	if md {
		p.F("| %s |\n|%s\n", strings.Join(t.head, " | "), strings.Repeat(" --- |", len(t.head)))
		for _, r := range t.rows {
			cells := make([]string, len(r))
			for i := range r {
				cells[i] = mdCell(r[i])
			}
			p.F("| %s |\n", strings.Join(cells, " | "))
		}
		return
	}
	width := make([]int, len(t.head))
	for i, h := range t.head {
		width[i] = len([]rune(h))
	}
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(cells []string) {
		for i, c := range cells {
			p.F("  %-*s", width[i], c)
		}
		p.F("\n")
	}
	line(t.head)
	for _, r := range t.rows {
		line(r)
	}
}

// html lays t out as an HTML table.
func (t setTable) html(b *strings.Builder) {
	esc := html.EscapeString
	if t.title != "" {
		fmt.Fprintf(b, "<h3>%s</h3>\n", esc(t.title))
	}
	b.WriteString("<table>\n<thead><tr>")
	for _, h := range t.head {
		fmt.Fprintf(b, "<th>%s</th>", esc(h))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range t.rows {
		b.WriteString("<tr>")
		for i, c := range r {
			class := ""
			if i > 0 && !t.text[i] {
				class = ` class="n"`
			}
			fmt.Fprintf(b, "<td%s>%s</td>", class, esc(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
}

// setTables are the tables of set's report, by kind.
func setTables(set *results.Set) []setTable {
	ps := verdict.Points(set)
	hs := make([]headline, len(ps))
	for i, p := range ps {
		hs[i] = headlineOf(p.Run)
	}
	switch set.Kind {
	case results.SetSweep:
		t := setTable{head: []string{set.Pin, "requests ok", "aggregate tok/s", "in flight", "per stream (agg/in flight)", "decode tok/s p50",
			"effective tok/s p50", "TTFT ms p50", "TTFT ms p99", "TPOT ms p50", "valid"}}
		for i, h := range hs {
			t.rows = append(t.rows, []string{value(set, i), fmt.Sprintf("%d/%d", h.ok, h.requests), cell(h.aggregate), cell(h.inFlight),
				cell(h.perStream), cell(h.decode), cell(h.effective), cell(h.ttft), cell(h.ttftP99), cell(h.tpot), yesNo(h.valid)})
		}
		return []setTable{t}
	case results.SetBakeoff:
		return bakeoffTables(set)
	}
	return repeatTables(ps, hs)
}

// repeatTables are each run's headline figures, then per figure the mean
// across runs with its 95% confidence interval (Student's t).
func repeatTables(ps []verdict.Point, hs []headline) []setTable {
	runs := setTable{title: "Each run (steady window)", head: []string{"run", "requests ok", "aggregate tok/s", "effective tok/s p50",
		"TTFT ms p50", "TPOT ms p50", "errors", "valid"}}
	for i, h := range hs {
		runs.rows = append(runs.rows, []string{ps[i].Label, fmt.Sprintf("%d/%d", h.ok, h.requests), cell(h.aggregate), cell(h.effective),
			cell(h.ttft), cell(h.tpot), pct(h.errorRate), yesNo(h.valid)})
	}
	means := setTable{title: "Across runs", head: []string{"figure", "mean", "95% CI", "min", "max"}}
	for _, m := range []struct {
		name string
		get  func(headline) float64
	}{
		{"aggregate output tok/s", func(h headline) float64 { return h.aggregate }},
		{"per-stream tok/s (aggregate / in flight)", func(h headline) float64 { return h.perStream }},
		{"decode tok/s p50 (per stream)", func(h headline) float64 { return h.decode }},
		{"effective tok/s p50 (per stream)", func(h headline) float64 { return h.effective }},
		{"TTFT ms p50", func(h headline) float64 { return h.ttft }},
		{"TTFT ms p99", func(h headline) float64 { return h.ttftP99 }},
		{"TPOT ms p50", func(h headline) float64 { return h.tpot }},
		{"error rate", func(h headline) float64 { return h.errorRate }},
	} {
		var xs []float64
		for _, h := range hs {
			if v := m.get(h); !math.IsNaN(v) {
				xs = append(xs, v)
			}
		}
		mean, half := stats.MeanCI(xs, 0.95)
		lo, hi := stats.MinMax(xs)
		means.rows = append(means.rows, []string{m.name, cell(mean), "± " + cell(half), cell(lo), cell(hi)})
	}
	return []setTable{runs, means}
}

func value(set *results.Set, i int) string {
	if i < len(set.Values) {
		return strconv.FormatFloat(set.Values[i], 'f', -1, 64)
	}
	return "?"
}

func joinValues(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// setTitle is the set's first line: what it is and what it holds.
func setTitle(set *results.Set, md bool) string {
	switch {
	case set.Kind == results.SetSweep && md:
		return fmt.Sprintf("# sixpin sweep: %s, %s = %s", set.Scenario, set.Pin, joinValues(set.Values))
	case set.Kind == results.SetSweep:
		return fmt.Sprintf("SWEEP %s: %s = %s (the other five pins held; figures from each point's steady window)", set.Scenario, set.Pin, joinValues(set.Values))
	case set.Kind == results.SetBakeoff && md:
		return "# sixpin bake-off: " + set.Scenario
	case set.Kind == results.SetBakeoff:
		var names []string
		for _, v := range verdict.Vendors(set) {
			names = append(names, v.Profile)
		}
		return fmt.Sprintf("BAKE-OFF %s: %s", set.Scenario, strings.Join(names, " vs "))
	case md:
		return fmt.Sprintf("# sixpin repeats: %s, %d runs", set.Scenario, len(set.Runs))
	}
	return fmt.Sprintf("REPEATS %s: %d runs, seeds from the scenario's on; means with 95%% confidence intervals across runs (Student's t), each run's steady window", set.Scenario, len(set.Runs))
}

// WriteSetText writes a set as text or (md) Markdown: its title, whether
// it is complete, the pins its members share, and its tables — a row per
// point of a sweep; each run and the means with 95% confidence intervals
// of repeats; each vendor's figures and the usable view of a bake-off.
func WriteSetText(w io.Writer, set *results.Set, md bool) error {
	p := &numfmt.Printer{W: w}
	p.F("%s\n\n", setTitle(set, md))
	if set.Kind == results.SetBakeoff {
		line := bakeoffVerdict(set, viewBakeoff(set))
		if md {
			p.F("**Verdict:** %s\n\n", line)
		} else {
			p.F("VERDICT: %s\n\n", line)
		}
		if r := repeatsLine(set); r != "" {
			p.F("%s\n\n", r)
		}
	}
	if set.Incomplete {
		p.F("INCOMPLETE: %s\n\n", set.IncompleteReason)
	}
	writeSharedPins(p, set, md)
	for _, t := range setTables(set) {
		p.F("\n")
		t.write(p, md)
	}
	if invalid := invalidMembers(set); invalid > 0 {
		_, members := setWords(set)
		p.F("\n%d of %d %s were invalid or incomplete: see their results.\n", invalid, len(set.Runs), members)
	}
	return p.Err
}

func invalidMembers(set *results.Set) int {
	n := 0
	for _, r := range set.Runs {
		if !r.Valid || r.Incomplete {
			n++
		}
	}
	return n
}

// sharedPin is one pin across a set's members: the words they share (or
// how they differ) and each member's verdict.
type sharedPin struct {
	N     int
	Pin   string
	Text  string
	Marks []string
	// Unverified are the members at which the pin is not verified, with
	// why ("concurrency.streams = 4: …").
	Unverified []string
}

// sharedPins words set's six declared pins across its members: the words
// DeclaredPins gives when every member declares the pin alike; "varies:
// the swept pin" for a sweep's; else each member's words.
func sharedPins(set *results.Set) []sharedPin {
	ps := verdict.Points(set)
	out := make([]sharedPin, 6)
	texts := make([][]string, 6)
	for _, p := range ps {
		for j, d := range DeclaredPins(p.Run.Pins.Declared()) {
			out[j].N, out[j].Pin = d.N, d.Pin
			texts[j] = append(texts[j], d.Text)
		}
		card := PinCard(p.Run)
		for j, r := range card.Rows[:len(out)] { // the six; a set's members are not content-checked
			out[j].Marks = append(out[j].Marks, r.Mark())
			if r.Verdict != results.Verified {
				out[j].Unverified = append(out[j].Unverified, p.Label+": "+r.Reason)
			}
		}
	}
	swept := sweptPin(set)
	for j := range out {
		same := true
		for _, t := range texts[j] {
			same = same && t == texts[j][0]
		}
		switch {
		case len(texts[j]) == 0:
		case same:
			out[j].Text = texts[j][0]
		case out[j].Pin == swept:
			out[j].Text = "varies: the swept pin (" + set.Pin + ", see the table)"
		default:
			// Each text once, after the members that share it.
			var order []string
			who := map[string][]string{}
			for i, t := range texts[j] {
				if _, ok := who[t]; !ok {
					order = append(order, t)
				}
				who[t] = append(who[t], ps[i].Label)
			}
			var each []string
			for _, t := range order {
				each = append(each, strings.Join(who[t], ", ")+": "+t)
			}
			_, members := setWords(set)
			out[j].Text = "varies by " + strings.TrimSuffix(members, "s") + ": " + strings.Join(each, "; ")
		}
	}
	return out
}

// sweptPin is which of the six pins a sweep varies ("" for other sets).
func sweptPin(set *results.Set) string {
	if set.Kind != results.SetSweep {
		return ""
	}
	pin, _, _ := strings.Cut(set.Pin, ".")
	return pin
}

// writeSharedPins writes the pins the set's members share, with each
// member's verdict mark, and the members at which a pin is not verified.
func writeSharedPins(p *numfmt.Printer, set *results.Set, md bool) {
	_, members := setWords(set)
	pins := sharedPins(set)
	if md {
		p.F("**Pins shared by the %d %s** (declared; verdict per %s in order: ✓ verified, ✗ contradicted, ? unverifiable)\n\n",
			len(set.Runs), members, strings.TrimSuffix(members, "s"))
		p.F("| pin | verdicts | declared |\n| --- | --- | --- |\n")
		for _, sp := range pins {
			p.F("| %d %s | %s | %s |\n", sp.N, sp.Pin, strings.Join(sp.Marks, " "), mdCell(sp.Text))
		}
	} else {
		p.F("PINS SHARED BY THE %d %s — declared; verdict per %s in order: ✓ verified, ✗ contradicted, ? unverifiable\n",
			len(set.Runs), strings.ToUpper(members), strings.TrimSuffix(members, "s"))
		for _, sp := range pins {
			p.F("  %d %-12s %s  %s\n", sp.N, sp.Pin, strings.Join(sp.Marks, ""), sp.Text)
		}
	}
	var not []string
	for _, sp := range pins {
		for _, u := range sp.Unverified {
			not = append(not, sp.Pin+" at "+u)
		}
	}
	for _, n := range not {
		if md {
			p.F("\n> Not verified: %s", mdCell(n))
		} else {
			p.F("  NOT VERIFIED: %s\n", n)
		}
	}
	if md && len(not) > 0 {
		p.F("\n")
	}
}

// WriteSetHTML writes a set as one self-contained page (no scripts, no
// network): the pins its members share with each one's verdicts, its
// tables, and charts whose every point is labelled with its member —
// aggregate against per-stream throughput (the throughput–latency Pareto
// view: along a sweep each point is a concurrency or a length, and moving
// along the curve trades one for the other) and effective throughput
// against context length when the members' contexts differ by more than
// 10%.
func WriteSetHTML(w io.Writer, set *results.Set) error {
	var b strings.Builder
	esc := html.EscapeString
	kind, members := setWords(set)
	title := "sixpin " + kind + ": " + set.Scenario
	writePageHead(&b, title, "")
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p class=\"ident\">%s", esc(title), esc(strings.TrimPrefix(setTitle(set, false), strings.ToUpper(strings.TrimSuffix(kind, "s"))+" ")))
	for _, r := range set.Runs {
		if r.Target.Simulated {
			b.WriteString(`<span class="badge sim">SIMULATED</span>`)
			break
		}
	}
	b.WriteString("</p>\n")
	if set.Kind == results.SetBakeoff {
		fmt.Fprintf(&b, "<p class=\"verdict\"><b>Verdict:</b> %s</p>\n", esc(bakeoffVerdict(set, viewBakeoff(set))))
		if r := repeatsLine(set); r != "" {
			fmt.Fprintf(&b, "<p>%s</p>\n", esc(r))
		}
	}
	if set.Incomplete {
		fmt.Fprintf(&b, "<div class=\"warn\"><b>INCOMPLETE:</b> %s</div>\n", esc(set.IncompleteReason))
	}
	ps := verdict.Points(set)
	fmt.Fprintf(&b, "<h3>Pins shared by the %d %s</h3>\n<p>Declared; a verdict per %s, in order. <span class=\"v-true\">✓ verified</span> · <span class=\"v-false\">✗ contradicted</span> · <span class=\"v-unverifiable\">? unverifiable</span></p>\n",
		len(set.Runs), members, strings.TrimSuffix(members, "s"))
	b.WriteString("<table class=\"pins\">\n<thead><tr><th>pin</th><th>verdicts</th><th>declared</th></tr></thead>\n<tbody>\n")
	for _, sp := range sharedPins(set) {
		var marks strings.Builder
		for i, m := range sp.Marks {
			fmt.Fprintf(&marks, "<span title=\"%s\">%s</span>", esc(ps[i].Label), m)
		}
		fmt.Fprintf(&b, "<tr><td>%d&#160;%s</td><td class=\"mark\">%s</td><td>%s</td></tr>\n", sp.N, esc(sp.Pin), marks.String(), esc(sp.Text))
		for _, u := range sp.Unverified {
			fmt.Fprintf(&b, "<tr><td></td><td></td><td class=\"note\">not verified at %s</td></tr>\n", esc(u))
		}
	}
	b.WriteString("</tbody>\n</table>\n")
	for _, t := range setTables(set) {
		if t.title == "" {
			t.title = "Points (each one's steady window)"
		}
		t.html(&b)
	}
	one := map[string]string{results.SetSweep: "swept value", results.SetBakeoff: "vendor"}[set.Kind]
	if one == "" {
		one = "run"
	}
	pareto := series{color: colStream, marks: true}
	context := series{color: colSteady, marks: true}
	loP, hiP := math.Inf(1), 0.0
	for _, p := range ps {
		h := headlineOf(p.Run)
		if !math.IsNaN(h.perStream) && h.aggregate > 0 {
			pareto.pts = append(pareto.pts, [2]float64{h.perStream, h.aggregate})
			pareto.labels = append(pareto.labels, p.Label)
		}
		if h.promptP50 > 0 && !math.IsNaN(h.effective) {
			context.pts = append(context.pts, [2]float64{h.promptP50, h.effective})
			context.labels = append(context.labels, p.Label)
			loP, hiP = math.Min(loP, h.promptP50), math.Max(hiP, h.promptP50)
		}
	}
	var charts []*chart
	var captions []string
	caption := "One point per " + one + ", labelled; figures from its steady window."
	if set.Kind == results.SetBakeoff {
		pareto = bakeoffPareto(viewBakeoff(set))
		if bakeoffRepeats(set) > 1 {
			caption = "One point per vendor (the mean of its runs), labelled; figures from each run's steady window."
		}
	}
	if len(pareto.pts) > 0 {
		charts = append(charts, pointChart("Aggregate vs per-stream throughput, one point per "+one,
			"per-stream output tok/s (aggregate / mean in flight)", "aggregate output tok/s", pareto, set.Kind == results.SetSweep))
		captions = append(captions, caption)
	}
	if set.Kind == results.SetSweep {
		if c := latencyThroughputChart(ps); c != nil {
			charts = append(charts, c)
			captions = append(captions, "The latency–throughput curve: each swept value's TTFT p90 (left) and per-stream tok/s (right, dashed) against the aggregate it reached, steady window. Where the aggregate stops rising and TTFT climbs, the server is saturated.")
		}
	}
	// Against context only when the members' contexts differ (a sweep of
	// prompt lengths, say): a line along one context says nothing. A
	// bake-off's vendors share one scenario: its by-depth chart says how
	// each one's speed falls with the context instead.
	if len(context.pts) > 1 && hiP > 1.1*loP && set.Kind != results.SetBakeoff {
		charts = append(charts, pointChart("Effective throughput vs context length", "prompt tokens (p50, usage)",
			"effective tok/s per stream (p50)", context, set.Kind == results.SetSweep))
		captions = append(captions, caption)
	}
	if set.Kind == results.SetBakeoff {
		if c := bakeoffContextChart(viewBakeoff(set)); c != nil {
			charts = append(charts, c)
			captions = append(captions, "Each vendor's p50 over the requests whose prompt fell in each context band, whole run"+
				map[bool]string{true: "; with repeats, the mean of its runs' p50s.", false: "."}[bakeoffRepeats(set) > 1])
		}
	}
	if len(charts) > 0 {
		b.WriteString("<h3>Charts</h3>\n<div class=\"charts\">\n")
		for i, c := range charts {
			figure(&b, c, captions[i])
		}
		b.WriteString("</div>\n")
	}
	if invalid := invalidMembers(set); invalid > 0 {
		fmt.Fprintf(&b, "<div class=\"warn\">%d of %d %s were invalid or incomplete: see their results.</div>\n", invalid, len(set.Runs), members)
	}
	fmt.Fprintf(&b, "<footer>Generated by sixpin from a set of %d runs. Every figure is bound to its pins; per-stream and aggregate throughput are different metrics.</footer>\n</body>\n</html>\n", len(set.Runs))
	_, err := io.WriteString(w, b.String())
	return err
}

// pointChart plots labelled points on axes from zero that fit them; a
// sweep's points are joined in order.
// latencyThroughputChart draws a sweep's TTFT p90 (left axis) and
// per-stream tok/s (right) against the aggregate tok/s each point
// reached, in the sweep's order (nil: fewer than two points have them).
func latencyThroughputChart(ps []verdict.Point) *chart {
	ttft := series{name: "TTFT p90 (ms)", color: colP90, marks: true}
	per := series{name: "per-stream tok/s (right axis)", color: colStream, marks: true, dash: true, right: true}
	var hix, hiy, hiy2 float64
	for _, p := range ps {
		h := headlineOf(p.Run)
		w := p.Run.Windows[h.window]
		if w == nil || w.TTFTMs == nil || h.aggregate <= 0 || math.IsNaN(h.perStream) {
			continue
		}
		ttft.pts = append(ttft.pts, [2]float64{h.aggregate, w.TTFTMs.P90})
		ttft.labels = append(ttft.labels, p.Label)
		per.pts = append(per.pts, [2]float64{h.aggregate, h.perStream})
		hix, hiy, hiy2 = math.Max(hix, h.aggregate), math.Max(hiy, w.TTFTMs.P90), math.Max(hiy2, h.perStream)
	}
	if len(ttft.pts) < 2 {
		return nil
	}
	xt, x0, x1 := niceTicks(0, hix*1.1, 6, tickLabel)
	yt, y0, y1 := niceTicks(0, hiy*1.15, 5, tickLabel)
	y2 := axis{label: "per-stream tok/s"}
	y2.ticks, y2.min, y2.max = niceTicks(0, hiy2*1.15, 5, tickLabel)
	return &chart{title: "Latency against throughput, one point per swept value", width: 720, height: 340,
		xLabel: "aggregate output tok/s (all streams)", yLabel: "TTFT p90 ms",
		x: axis{min: x0, max: x1, ticks: xt}, y: axis{min: y0, max: y1, ticks: yt}, y2: &y2,
		series: []series{ttft, per}}
}

func pointChart(title, xl, yl string, s series, joined bool) *chart {
	var hix, hiy float64
	for _, p := range s.pts {
		hix, hiy = math.Max(hix, p[0]), math.Max(hiy, p[1])
	}
	xt, x0, x1 := niceTicks(0, hix*1.1, 6, tickLabel)
	yt, y0, y1 := niceTicks(0, hiy*1.1, 5, tickLabel)
	if !joined {
		s.dots, s.marks = false, true
		s.noLine = true
	}
	return &chart{
		title: title, width: 720, height: 340, xLabel: xl, yLabel: yl,
		x:      axis{min: x0, max: x1, ticks: xt},
		y:      axis{min: y0, max: y1, ticks: yt},
		series: []series{s},
	}
}

// moneyCell is an amount in a table cell: numfmt.Money, or "–" for none.
func moneyCell(v float64) string {
	if v <= 0 || math.IsNaN(v) {
		return "–"
	}
	return numfmt.Money(v)
}
