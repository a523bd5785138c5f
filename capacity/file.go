package capacity

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/sixpin/sixpin/internal/atomicfile"
	"github.com/sixpin/sixpin/internal/fielderr"
	"github.com/sixpin/sixpin/internal/jsonerr"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// Replay is the search f's points make: every point recorded in order.
func Replay(f *File) *Search {
	s := NewSearch(f.Plan.Axis, f.Plan.Start, TierNames(f.Plan.Tiers))
	for _, p := range f.Points {
		s.Record(p)
	}
	return s
}

// Fill sets f's answers from its points: each tier's N* or interval, the
// binding constraint read from the run that failed at N*+1, and N*
// normalised by the deployment and the cost measured at N*.
func Fill(f *File) {
	s := Replay(f)
	f.Answers = s.Answers()
	for i := range f.Answers {
		a := &f.Answers[i]
		failed := func(p *Point) bool {
			v := p.Verdict(a.Tier)
			return !p.Valid || v != nil && v.Outcome == verdict.Failed
		}
		switch {
		case a.HasHi:
			if p := lastAt(f.Points, a.Tier, a.Hi, failed); p != nil {
				a.Binding = Bind(a.Tier, p)
			}
		case a.HasUnjudged:
			if p := lastAt(f.Points, a.Tier, a.Unjudged, func(*Point) bool { return true }); p != nil {
				a.Binding = Bind(a.Tier, p)
			}
		}
		if p := f.NStarPoint(*a); p != nil {
			a.PerDeployment = Normalise(a.Lo, f.Deployment, p.Run)
		}
	}
}

// lastAt is the last point at value v judged for tier that is, nil when
// none.
func lastAt(ps []Point, tier string, v float64, is func(*Point) bool) *Point {
	for i := len(ps) - 1; i >= 0; i-- {
		p := &ps[i]
		if p.Value == v && slices.Contains(p.Judged, tier) && is(p) {
			return p
		}
	}
	return nil
}

// NStarPoint is the run that last passed a's tier at a.Lo (N* when
// found; the largest pass of an interval or a bound) among the points run
// for the tier; nil when none passed.
func (f *File) NStarPoint(a Answer) *Point {
	if !a.HasLo {
		return nil
	}
	return lastAt(f.Points, a.Tier, a.Lo, func(p *Point) bool { return p.Passed(a.Tier) })
}

// WriteFile writes f to path atomically, as indented JSON.
func WriteFile(path string, f *File) error {
	return atomicfile.WriteJSON(path, "capacity", f)
}

// ReadFile reads a capacity file and checks it as Read does.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read capacity: %w", err)
	}
	return Read(path, data)
}

// Read decodes a capacity file's data (name is used in errors) and checks
// that it holds together: its schema, an axis and tiers that parse, every
// point's value inside the axis, its verdicts for known tiers and its full
// results (each checked as a results file is, under points[i].run), and
// answers that its points give again. Each problem is a fielderr.Error at
// file:line:col and its field.
func Read(name string, data []byte) (*File, error) {
	var errs fielderr.List
	at := func(path []string, format string, args ...any) {
		e := &fielderr.Error{File: name, Field: jsonerr.Path(path), Msg: fmt.Sprintf(format, args...)}
		if off, _ := jsonerr.Find(data, path...); off > 0 {
			e.Line, e.Col = jsonerr.LineCol(data, off)
		}
		errs = append(errs, e)
	}
	if s := results.SchemaOf(data); s != Schema {
		at([]string{"schema"}, "want %q, got %q: not a sixpin capacity file", Schema, s)
		return nil, errs
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		field, msg := jsonerr.Describe(err)
		e := &fielderr.Error{File: name, Field: field, Msg: msg}
		e.Line, e.Col, _ = jsonerr.Position(data, err)
		return nil, fielderr.List{e}
	}
	a := f.Plan.Axis
	if !slices.Contains([]string{AxisStreams, AxisSessions, AxisRate}, a.Kind) {
		at([]string{"plan", "axis", "kind"}, "unknown axis %q (want %s, %s or %s)", a.Kind, AxisStreams, AxisSessions, AxisRate)
	}
	if !(a.Min > 0 && a.Min <= a.Max) {
		at([]string{"plan", "axis", "min"}, "want 0 < min ≤ max (got %v and %v)", a.Min, a.Max)
	}
	if len(f.Plan.Tiers) == 0 {
		at([]string{"plan", "tiers"}, "no tier")
	}
	tiers := map[string]bool{}
	for i, t := range f.Plan.Tiers {
		ti := strconv.Itoa(i)
		if t.Name == "" || tiers[t.Name] {
			at([]string{"plan", "tiers", ti, "name"}, "a tier needs a name of its own (got %q)", t.Name)
		}
		tiers[t.Name] = true
		if len(t.Conditions) == 0 {
			at([]string{"plan", "tiers", ti, "conditions"}, "no condition")
		}
		for j, c := range t.Conditions {
			if err := c.Validate(); err != nil {
				at([]string{"plan", "tiers", ti, "conditions", strconv.Itoa(j)}, "%v", err)
			}
		}
	}
	for i, p := range f.Points {
		pi := strconv.Itoa(i)
		if p.Value < a.Min || p.Value > a.Max {
			at([]string{"points", pi, "value"}, "%v lies outside the axis [%v, %v]", p.Value, a.Min, a.Max)
		}
		for _, j := range p.Judged {
			if !tiers[j] {
				at([]string{"points", pi, "judged"}, "unknown tier %q", j)
			}
		}
		for k, v := range p.Verdicts {
			path := []string{"points", pi, "verdicts", strconv.Itoa(k)}
			switch {
			case !tiers[v.Tier]:
				at(append(path, "tier"), "unknown tier %q", v.Tier)
			case !slices.Contains([]verdict.Outcome{verdict.Passed, verdict.Failed, verdict.Undecided}, v.Outcome):
				at(append(path, "outcome"), "unknown outcome %q (want pass, fail or undecided)", v.Outcome)
			case v.Outcome == verdict.Failed && (v.First < 0 || v.First >= len(v.Conditions)):
				at(append(path, "first"), "a failed tier names the condition that failed first (got %d of %d)", v.First, len(v.Conditions))
			}
		}
		if p.Run == nil {
			at([]string{"points", pi, "run"}, "missing: each point holds its full results")
			continue
		}
		if err := results.CheckRun(name, data, []string{"points", pi, "run"}, p.Run); err != nil {
			var l fielderr.List
			if errors.As(err, &l) {
				errs = append(errs, l...)
			} else {
				at([]string{"points", pi, "run"}, "%v", err)
			}
		}
	}
	if len(errs) == 0 {
		want := Replay(&f).Answers()
		for i, got := range f.Answers {
			if i >= len(want) {
				at([]string{"answers", strconv.Itoa(i)}, "tier %q has no answer in the plan", got.Tier)
				continue
			}
			w := want[i]
			if got.Tier != w.Tier || got.Kind != w.Kind || got.Lo != w.Lo || got.Hi != w.Hi || got.HasLo != w.HasLo || got.HasHi != w.HasHi {
				at([]string{"answers", strconv.Itoa(i)}, "%s %s [%v, %v) does not follow from the points, which give %s %s [%v, %v)",
					got.Tier, got.Kind, got.Lo, got.Hi, w.Tier, w.Kind, w.Lo, w.Hi)
			}
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	return &f, nil
}

// IsFile reports whether data declares the capacity schema.
func IsFile(data []byte) bool { return results.SchemaOf(data) == Schema }
