package report

import (
	"fmt"
	"strings"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// bakeoffTables are each vendor's figures, then the "usable" view —
// intelligence as a gate the user declares, then throughput, context
// lifetime, cost and reliability each in its own column, every best
// marked (ties too), so that a reader sees where each vendor wins and
// loses and why it lost what it lost; no blended score.
func bakeoffTables(set *results.Set) []setTable {
	bv := viewBakeoff(set)
	speed := setTable{title: "Speed (each vendor's steady window; per stream unless marked aggregate)",
		head: []string{"profile", "effective tok/s p50", "decode tok/s p50", "aggregate tok/s",
			"TTFT ms p50", "TTFT ms p99", "E2E ms p50", "E2E ms p99"}}
	money := setTable{title: "Lifetime, cost and reliability",
		head: []string{"profile", "context lifetime", "$/hour", "$/agent-hour", "$/session", "$/M output", "errors", "429s", "valid"},
		text: map[int]bool{1: true}}
	for _, v := range bv.vendors {
		f := func(get func(headline) float64) string { return figOf(v.hs, get, true).text(num) }
		speed.rows = append(speed.rows, []string{v.Profile,
			f(func(h headline) float64 { return h.effective }),
			f(func(h headline) float64 { return h.decode }),
			f(func(h headline) float64 { return h.aggregate }),
			f(func(h headline) float64 { return h.ttft }),
			f(func(h headline) float64 { return h.ttftP99 }),
			f(func(h headline) float64 { return h.e2e }),
			f(func(h headline) float64 { return h.e2eP99 })})
		usd := func(get func(headline) float64) string { return figOf(v.hs, get, true).text(moneyCell) }
		session := usd(func(h headline) float64 { return h.costSession })
		if v.lifeCapped && session != "–" {
			session = "≥ " + session + " (sessions cut short)"
		}
		money.rows = append(money.rows, []string{v.Profile,
			v.lifetimeText(),
			usd(func(h headline) float64 { return h.costHour }),
			usd(func(h headline) float64 { return h.costAgentHour }),
			session,
			v.costM.text(moneyCell),
			figOf(v.hs, func(h headline) float64 { return h.errorRate }, false).text(pct),
			figOf(v.hs, func(h headline) float64 { return h.rate429 }, false).text(pct),
			validText(v)})
	}
	usable := setTable{title: "Usable? Intelligence is a gate, not a multiplier; then each dimension on its own (★ the best, ties included)",
		head: []string{"profile", "intelligence gate", "effective throughput", "context lifetime", "cost", "reliability", "lost, and why"},
		text: map[int]bool{2: true, 3: true, 4: true, 5: true, 6: true}}
	for i, v := range bv.vendors {
		gate := v.Gate
		if gate == "" {
			gate = "not declared"
		}
		tag := lostTag(v.Vendor)
		_, throttled := v.Loss(verdict.LossThrottled)
		life := v.lifetime.text(num)
		if life != "–" {
			life += " min"
		}
		if v.lifeCapped && life != "–" {
			life = "≥ " + life
		}
		usable.rows = append(usable.rows, []string{v.Profile, gate,
			star(v.effective.text(num)+" tok/s", bv.best[dimThroughput][i]) + tags(tag),
			star(life, bv.best[dimLifetime][i]) + tags(when(v.lifeCapped, "capped"), tag),
			star(v.costM.text(moneyCell)+" /M out", bv.best[dimCost][i]) + tags(tag),
			star(v.reliability.text(pct), bv.best[dimReliable][i]) + tags(when(throttled, "throttled"), tag),
			lostWhy(v)})
	}
	return []setTable{speed, money, usable}
}

// validText is "yes", "NO", or with repeats how many runs were valid
// ("2 of 3").
func validText(v vendorView) string {
	n := 0
	for _, r := range v.Runs {
		if r.Valid && !r.Incomplete {
			n++
		}
	}
	if len(v.Runs) == 1 {
		return yesNo(n == 1)
	}
	return fmt.Sprintf("%d of %d", n, len(v.Runs))
}

// lostTag names why none of a vendor's figures stand for the scenario:
// "invalid", "failed", "partial"; "" otherwise (a throttled vendor's
// figures are what its rate limit let through, said where it shows).
func lostTag(v verdict.Vendor) string {
	for _, l := range v.Losses {
		switch l.Kind {
		case verdict.LossInterrupted:
			return "partial"
		case verdict.LossFailed, verdict.LossInvalid:
			return l.Kind
		}
	}
	return ""
}

// tags is " (a, b)" of the non-empty words, or "".
func tags(words ...string) string {
	var ws []string
	for _, w := range words {
		if w != "" {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return ""
	}
	return " (" + strings.Join(ws, ", ") + ")"
}

// when is word when on, else "".
func when(on bool, word string) string {
	if on {
		return word
	}
	return ""
}

// lostWhy says what a vendor lost and why: each loss, and a figure a
// setting capped; "–" for none.
func lostWhy(v vendorView) string {
	var why []string
	for _, l := range v.Losses {
		switch l.Kind {
		case verdict.LossThrottled:
			why = append(why, "throttled: "+l.Why+" ("+pct(l.Share)+")")
		case verdict.LossInvalid:
			why = append(why, "invalid: "+l.Why)
		default:
			why = append(why, l.Kind+": "+l.Why)
		}
	}
	if v.lifeCapped {
		why = append(why, "capped: context lifetime by "+v.lifeWhy)
	}
	if len(why) == 0 {
		return "–"
	}
	return strings.Join(why, "; ")
}
