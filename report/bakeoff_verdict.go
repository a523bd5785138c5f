package report

import (
	"fmt"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/verdict"
)

// winWords name a vendor that holds a dimension's best, in the order the
// verdict says them.
var winWords = []struct{ dim, word string }{
	{dimThroughput, "fastest"},
	{dimLifetime, "longest-lived"},
	{dimCost, "cheapest"},
	{dimReliable, "most reliable"},
}

// bakeoffVerdict is the bake-off in one line, from its figures: the load,
// then each vendor — usable ones first — with the dimensions it leads and
// what it lost ("for agentic-120k at 2 agents: sim-local-27b is usable,
// cheapest and most reliable; sim-cerebras-27b is fastest but not
// usable: it loses 13.8% of its requests to its rate limit"). A
// dimension every vendor leads alike is left out: it tells them apart in
// nothing.
func bakeoffVerdict(set *results.Set, bv bakeoffView) string {
	var usable, others []string
	for i, v := range bv.vendors {
		var wins []string
		for _, w := range winWords {
			if bv.best[w.dim][i] && !all(bv.best[w.dim]) {
				wins = append(wins, w.word)
			}
		}
		if v.Usable() {
			usable = append(usable, usableWords(v, wins))
		} else {
			others = append(others, lostWords(v, wins))
		}
	}
	line := "for " + set.Scenario + loadWords(set) + ": "
	if len(usable) == 0 {
		line += "no vendor is usable — "
	}
	line += strings.Join(append(usable, others...), "; ")
	capped := 0
	for _, v := range bv.vendors {
		if v.lifeCapped {
			capped++
		}
	}
	switch {
	case capped == len(bv.vendors) && capped > 0:
		line += "; context lifetime is not compared: capped by " + bv.vendors[0].lifeWhy
	case capped > 0:
		line += fmt.Sprintf("; %d of %d vendors' context lifetime is only a bound (capped)", capped, len(bv.vendors))
	}
	return line
}

// usableWords: "NAME is usable, cheapest and most reliable", with what
// its rate limit refused when it refused some.
func usableWords(v vendorView, wins []string) string {
	s := v.Profile + " is usable"
	if len(wins) > 0 {
		s += ", " + andList(wins)
	} else if len(v.Runs) > 0 {
		s += " but leads in nothing"
	}
	if th, ok := v.Loss(verdict.LossThrottled); ok {
		s += ", though its rate limit refused " + pct(th.Share) + " of its requests"
	}
	return s
}

// lostWords: "NAME is fastest but not usable: it loses 13.8% of its
// requests to its rate limit and its figures are invalid (errors)".
func lostWords(v vendorView, wins []string) string {
	var why []string
	if v.Gate == "fail" {
		why = append(why, "it fails your intelligence gate")
	}
	if th, ok := v.Loss(verdict.LossThrottled); ok {
		why = append(why, "it loses "+pct(th.Share)+" of its requests to its rate limit")
	}
	for _, l := range v.Losses {
		switch l.Kind {
		case verdict.LossInvalid:
			why = append(why, "its figures are invalid ("+l.Why+")")
		case verdict.LossFailed:
			why = append(why, "its run failed ("+l.Why+")")
		case verdict.LossInterrupted:
			why = append(why, "its run was cut short")
		}
	}
	s := v.Profile + " is "
	if len(wins) > 0 {
		s += andList(wins) + " but "
	}
	return s + "not usable: " + andList(why)
}

// loadWords is the scenario's load as the verdict says it: " at 2
// agents", " at 16 streams", " at 2.5 requests/s"; "" when unknown.
func loadWords(set *results.Set) string {
	if len(set.Runs) == 0 {
		return ""
	}
	c := set.Runs[0].Pins.Concurrency.Declared
	switch {
	case c.Mode == scenario.ModeOpen && c.RateRPS > 0:
		return " at " + numfmt.Plain(c.RateRPS) + " requests/s"
	case c.Streams > 0 && c.Sessions:
		return " at " + numfmt.Count(c.Streams, "agent", "")
	case c.Streams > 0:
		return " at " + numfmt.Count(c.Streams, "stream", "")
	}
	return ""
}

// andList joins words as "a", "a and b", "a, b and c".
func andList(ws []string) string {
	if len(ws) < 2 {
		return strings.Join(ws, "")
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}

func all(marks []bool) bool {
	for _, m := range marks {
		if !m {
			return false
		}
	}
	return len(marks) > 0
}
