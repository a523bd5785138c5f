package verdict

import (
	"fmt"
	"math"
	"strings"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
)

// Comparison is runs side by side, each against the first (the
// reference), figure by figure.
type Comparison struct {
	Runs  []Input
	Stats stats.Settings
	// Mismatches[i] lists how run i's pins differ from the reference's
	// (Mismatches[0] is always empty).
	Mismatches [][]Mismatch
	Sections   []Section
}

// Section is one group of compared figures: a window, or the whole run.
type Section struct {
	// Window names the window (results.WindowSteady …); "" for the whole
	// run's figures.
	Window string
	Rows   []Row
}

// Row is one figure across the runs.
type Row struct {
	// Key names the figure as gate rules do (steady.ttft_ms.p99).
	Key   string
	Label string
	Unit  string
	// Better says which direction is good; Fraction figures are 0–1.
	Better   Direction
	Fraction bool
	Integer  bool
	Cells    []Cell
}

// Cell is one run's value of a figure and, after the first run, its
// change against the reference.
type Cell struct {
	// Value is the run's figure in the row's unit (Row.Unit; a fraction
	// 0–1 when Row.Fraction).
	Value float64
	// OK is false when the run has no such figure.
	OK bool
	// Change is Value / reference − 1, a fraction; Interval is the
	// confidence interval of that ratio minus one (for i > 0 with both
	// values present).
	Change   float64
	Interval stats.Interval
	// Verdict is "better" or "worse" (beyond the interval), "noise" (the
	// interval holds no change), "same" (under 0.5%), "?" (no interval:
	// too few values for the percentile) or "" (no direction, or nothing
	// to compare).
	Verdict string
}

// Comparable reports whether every run's pins agree with the reference's.
func (c *Comparison) Comparable() bool {
	for _, ms := range c.Mismatches {
		if len(ms) > 0 {
			return false
		}
	}
	return true
}

// MismatchSummary names the differing pins of every run, for an error
// message, the reference's value first as the names are: "a.json vs
// b.json: concurrency: 4 vs 1; prompt p50: 519 vs 8,000".
func (c *Comparison) MismatchSummary() string {
	var parts []string
	for i, ms := range c.Mismatches {
		if len(ms) > 0 {
			parts = append(parts, fmt.Sprintf("%s vs %s: %s", c.Runs[0].Name, c.Runs[i].Name, JoinMismatches(ms)))
		}
	}
	return strings.Join(parts, "\n")
}

// compareFigures are the figures compared per window, in order.
var compareFigures = []struct {
	key   string
	stats []string
}{
	{"requests", nil},
	{"ttft_ms", []string{"p50", "p90", "p99"}},
	{"itl_ms", []string{"p50", "p99"}},
	{"tpot_ms", []string{"p50", "p99"}},
	{"e2e_ms", []string{"p50", "p99"}},
	{"decode_tok_s", []string{"p50"}},
	{"effective_tok_s", []string{"p10", "p50"}},
	{"aggregate_output_tok_s", nil},
	{"mean_in_flight", nil},
	{"aggregate_per_stream_tok_s", nil},
	{"peak_aggregate_output_tok_s", nil},
	{"goodput_rps", nil},
	{"goodput_fraction", nil},
	{"error_rate", nil},
}

// Compare compares runs against the first: pins first (Mismatches), then
// the steady and burst windows and the whole run, figure by figure, each
// change with its confidence interval and direction. Compare compares
// even when pins differ; callers decide whether to show it.
func Compare(runs []Input, st stats.Settings) (*Comparison, error) {
	if len(runs) < 2 {
		return nil, fmt.Errorf("compare: need at least two results files (got %d)", len(runs))
	}
	if err := st.Validate(); err != nil {
		return nil, err
	}
	c := &Comparison{Runs: runs, Stats: st, Mismatches: make([][]Mismatch, len(runs))}
	for i := 1; i < len(runs); i++ {
		c.Mismatches[i] = PinMismatches(runs[0].Run, runs[i].Run, st)
	}
	caches := make([]histCache, len(runs))
	for i := range caches {
		caches[i] = histCache{}
	}
	var refs [][]FigureRef
	windows := []string{results.WindowSteady, results.WindowBurst, ""}
	for _, w := range windows[:2] {
		var fs []FigureRef
		for _, f := range compareFigures {
			if len(f.stats) == 0 {
				ref, err := ParseFigure(w + "." + f.key)
				if err != nil {
					return nil, err
				}
				fs = append(fs, ref)
			}
			for _, s := range f.stats {
				ref, err := ParseFigure(w + "." + f.key + "." + s)
				if err != nil {
					return nil, err
				}
				fs = append(fs, ref)
			}
		}
		refs = append(refs, fs)
	}
	var whole []FigureRef
	for _, f := range runFigures {
		whole = append(whole, FigureRef{Figure: f})
	}
	refs = append(refs, whole)

	for si, fs := range refs {
		sec := Section{Window: windows[si]}
		for _, f := range fs {
			row := Row{Key: f.Key(), Label: f.shortLabel(), Unit: f.Figure.Unit, Better: f.Figure.Better, Fraction: f.Figure.Fraction, Integer: f.Figure.Integer}
			ests := make([]stats.Estimate, len(runs))
			seen := false
			for i, in := range runs {
				e, ok, _ := f.estimate(in.Run, caches[i])
				ests[i] = e
				row.Cells = append(row.Cells, Cell{Value: e.Value, OK: ok})
				seen = seen || ok
			}
			if !seen {
				continue
			}
			for i := 1; i < len(runs); i++ {
				ref, cur := &row.Cells[0], &row.Cells[i]
				if !ref.OK || !cur.OK {
					continue
				}
				cur.Change = change(ref.Value, cur.Value)
				iv := st.RatioInterval(fmt.Sprintf("%s/%d", f.Key(), i), ests[0], ests[i])
				if iv.Known {
					iv.Lo, iv.Hi = iv.Lo-1, iv.Hi-1
				}
				cur.Interval = iv
				cur.Verdict = judge(f.Figure.Better, cur.Change, iv)
			}
			sec.Rows = append(sec.Rows, row)
		}
		c.Sections = append(c.Sections, sec)
	}
	return c, nil
}

// change is cur/ref − 1 (±Inf from zero, 0 for zero to zero).
func change(ref, cur float64) float64 {
	switch {
	case ref != 0:
		return cur/ref - 1
	case cur == 0:
		return 0
	case cur > 0:
		return math.Inf(1)
	}
	return math.Inf(-1)
}

// sameBand is the relative change below which a figure counts as the same.
const sameBand = 0.005

// judge is a cell's Verdict: its change ch against the interval iv of
// that change.
func judge(better Direction, ch float64, iv stats.Interval) string {
	switch {
	case math.Abs(ch) < sameBand:
		return "same"
	case better == Neutral:
		return ""
	case !iv.Known:
		return "?"
	case iv.Lo <= 0 && iv.Hi >= 0:
		return "noise"
	case (ch > 0) == (better == HigherIsBetter):
		return "better"
	}
	return "worse"
}
