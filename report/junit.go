package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/sixpin/sixpin/results"
)

// JUnit XML, as CI systems read it (Jenkins, GitLab, GitHub test
// reporters): testsuites > testsuite > testcase with failure or skipped.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func (s *junitSuite) add(c junitCase) {
	c.Time = "0"
	s.Tests++
	switch {
	case c.Failure != nil:
		s.Failures++
	case c.Skipped != nil:
		s.Skipped++
	}
	s.Cases = append(s.Cases, c)
}

func (ss *junitSuites) add(s junitSuite) {
	if s.Time == "" {
		s.Time = "0"
	}
	ss.Tests += s.Tests
	ss.Failures += s.Failures
	ss.Skipped += s.Skipped
	ss.Suites = append(ss.Suites, s)
}

func writeJUnitXML(w io.Writer, ss *junitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(ss); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteJUnit writes runs as JUnit XML: a testsuite per results file, a
// testcase per pin (failed when contradicted, skipped when unverifiable),
// one for the run's validity and completeness, and per window (burst,
// steady, all) one for having measurements and one per SLO bound. A window
// meets an SLO bound when its p99 does (TTFT p99 ≤ slo.ttft_ms, and so on:
// the MLPerf server-scenario convention); with an error budget, a window's
// error rate must stay within it.
func WriteJUnit(w io.Writer, runs []Input) error {
	ss := &junitSuites{Name: "sixpin report"}
	for _, in := range runs {
		ss.add(runSuite(in))
	}
	return writeJUnitXML(w, ss)
}

func runSuite(in Input) junitSuite {
	run := in.Run
	s := junitSuite{
		Name:      fmt.Sprintf("%s (%s)", run.Scenario.Name, in.Name),
		Timestamp: run.StartedAt.UTC().Format(time.RFC3339),
		Properties: []junitProperty{
			{"file", in.Name},
			{"scenario", run.Scenario.Name},
			{"seed", strconv.FormatInt(run.Scenario.Seed, 10)},
			{"target", TargetLabel(run.Target)},
			{"simulated", strconv.FormatBool(run.Target.Simulated)},
			{"sixpin_version", run.SixpinVersion},
		},
	}
	card := PinCard(run)
	for _, r := range card.Rows {
		c := junitCase{Name: fmt.Sprintf("pin %d %s", r.N, r.Pin), Classname: "sixpin.pins",
			SystemOut: fmt.Sprintf("declared: %s\nobserved: %s\n%s", r.Declared, r.Observed, r.Reason)}
		switch r.Verdict {
		case results.Contradicted:
			c.Failure = &junitMessage{Message: "contradicted: " + r.Reason, Type: "pin", Text: c.SystemOut}
		case results.Unverifiable:
			c.Skipped = &junitMessage{Message: "unverifiable: " + r.Reason}
		}
		s.add(c)
	}
	valid := junitCase{Name: "run valid", Classname: "sixpin.run",
		SystemOut: "the figures describe the declared workload only if prompt, output and concurrency held their pins"}
	if !run.Valid {
		valid.Failure = &junitMessage{Message: "invalid: " + joinSemi(run.Invalid), Type: "validity"}
	}
	s.add(valid)
	complete := junitCase{Name: "run complete", Classname: "sixpin.run"}
	if run.Incomplete {
		complete.Failure = &junitMessage{Message: "incomplete: " + run.IncompleteReason, Type: "validity"}
	}
	s.add(complete)
	for _, name := range reportWindows {
		if win := run.Windows[name]; win != nil {
			for _, c := range windowCases(run, name, win) {
				s.add(c)
			}
		}
	}
	return s
}

// windowCases are a window's validity and SLO checks.
func windowCases(run *results.Run, name string, w *results.Window) []junitCase {
	class := "sixpin.window." + name
	var cs []junitCase
	measured := junitCase{Name: name + ": measured", Classname: class,
		SystemOut: fmt.Sprintf("%s–%s s, %d requests (%d ok, %d failed)", num(w.StartS), num(w.EndS), w.Requests, w.Completed, w.Failed)}
	switch {
	case w.DurationS <= 0:
		measured.Failure = &junitMessage{Message: "the window is empty: " + w.Note, Type: "validity"}
	case w.Completed == 0:
		measured.Failure = &junitMessage{Message: "no successful request started in the window", Type: "validity"}
	}
	cs = append(cs, measured)

	slo := run.Scenario.SLO
	bounds := []struct {
		label string
		bound float64
		d     *results.Dist
	}{{"TTFT", slo.TTFTMs, w.TTFTMs}, {"TPOT", slo.TPOTMs, w.TPOTMs}, {"E2E", slo.E2EMs, w.E2EMs}}
	anySLO := false
	for _, b := range bounds {
		if b.bound <= 0 {
			continue
		}
		anySLO = true
		c := junitCase{Name: fmt.Sprintf("%s: SLO %s p99 ≤ %s ms", name, b.label, num(b.bound)), Classname: class}
		switch {
		case b.d == nil:
			c.Skipped = &junitMessage{Message: "no " + b.label + " measured in the window"}
		case b.d.P99 > b.bound:
			c.Failure = &junitMessage{Message: fmt.Sprintf("%s p99 %s ms > %s ms", b.label, num(b.d.P99), num(b.bound)), Type: "slo"}
		default:
			c.SystemOut = fmt.Sprintf("%s p99 %s ms ≤ %s ms", b.label, num(b.d.P99), num(b.bound))
		}
		cs = append(cs, c)
	}
	if !anySLO {
		cs = append(cs, junitCase{Name: name + ": SLO", Classname: class,
			Skipped: &junitMessage{Message: "the scenario declares no latency SLO"}})
	}
	if budget := slo.MaxErrorRate; budget > 0 && w.Requests > 0 {
		rate := float64(w.Failed) / float64(w.Requests)
		c := junitCase{Name: fmt.Sprintf("%s: error rate ≤ %s", name, pct(budget)), Classname: class}
		if rate > budget {
			c.Failure = &junitMessage{Message: fmt.Sprintf("error rate %s > %s (%s)", pct(rate), pct(budget), results.ClassList(w.ErrorsByClass)), Type: "slo"}
		}
		cs = append(cs, c)
	}
	return cs
}

func joinSemi(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += "; "
		}
		out += s
	}
	return out
}
