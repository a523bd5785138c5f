package report

import (
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// fixBakeoffAgentic is agentic-120k for 2 minutes against sim-local-27b
// and sim-cerebras-27b, whose rate limit refuses some turns; no session
// ends before the run does.
const fixBakeoffAgentic = "testdata/bakeoff-agentic.json"

// usableRows are the usable view's rows of set, by profile.
func usableRows(t *testing.T, set *results.Set) map[string][]string {
	t.Helper()
	ts := bakeoffTables(set)
	rows := map[string][]string{}
	for _, r := range ts[len(ts)-1].rows {
		rows[r[0]] = r
	}
	return rows
}

// Every vendor whose printed value equals the best printed value holds
// the ★: reliability of two vendors with no error is a tie, and so is a
// throughput made equal.
func TestBakeoffStarsEveryTie(t *testing.T) {
	t.Parallel()
	set := loadSet(t, fixBakeoff).Set
	steady := func(r *results.Run) *results.Window { return r.Windows[r.Headline] }
	if a, b := set.Runs[0].Errors.Rate, set.Runs[1].Errors.Rate; a != b {
		t.Fatalf("fixture: error rates %v and %v, want a tie", a, b)
	}
	eff := *steady(set.Runs[1]).EffectiveTokS
	eff.P50 = steady(set.Runs[0]).EffectiveTokS.P50 + 0.01 // within the printed precision
	steady(set.Runs[1]).EffectiveTokS = &eff
	rows := usableRows(t, set)
	for _, name := range set.Profiles {
		row := rows[name]
		if !strings.HasSuffix(row[5], "★") {
			t.Errorf("%s: reliability %q, a tie, not starred", name, row[5])
		}
		if !strings.HasSuffix(row[2], "★") {
			t.Errorf("%s: throughput %q, a tie at the printed precision, not starred", name, row[2])
		}
	}
	if strings.HasSuffix(rows[set.Profiles[1]][4], "★") {
		t.Errorf("the dearer vendor's cost %q is starred", rows[set.Profiles[1]][4])
	}
}

// A context lifetime that the run's length capped says so in the figures
// and is no vendor's best; a throttled, invalid vendor says why it lost
// what it lost.
func TestBakeoffSaysWhatCappedAndWhy(t *testing.T) {
	t.Parallel()
	set := loadSet(t, fixBakeoffAgentic).Set
	ts := bakeoffTables(set)
	for _, r := range ts[1].rows {
		if life := column(t, ts[1], r[0], "context lifetime"); !strings.HasPrefix(life, "≥ ") || !strings.HasSuffix(life, "min — the run's length; no session ended") {
			t.Errorf("%s: context lifetime %q does not say the run capped it", r[0], life)
		}
	}
	rows := usableRows(t, set)
	for name, row := range rows {
		if strings.Contains(row[3], "★") || !strings.Contains(row[3], "capped") {
			t.Errorf("%s: lifetime %q: a bound is marked best or not marked capped", name, row[3])
		}
	}
	for _, v := range verdict.Vendors(set) {
		why := rows[v.Profile][6]
		for _, r := range v.Runs {
			if !r.Valid {
				pin, _, _ := strings.Cut(r.Invalid[0], ":")
				if !strings.Contains(why, "invalid: "+pin) || !strings.Contains(rows[v.Profile][2], "(invalid)") {
					t.Errorf("%s: invalid (%s) but its row says %q", v.Profile, pin, rows[v.Profile])
				}
			}
			if n := r.Errors.ByClass["http_429"]; n > 0 {
				if !strings.Contains(why, "throttled: ") || !strings.Contains(rows[v.Profile][5], "throttled") {
					t.Errorf("%s: %d 429s but its row says %q", v.Profile, n, rows[v.Profile])
				}
			} else if strings.Contains(why, "throttled") {
				t.Errorf("%s: no 429 but throttled: %q", v.Profile, why)
			}
		}
	}
}

// column is the cell under head in t's row for profile.
func column(t *testing.T, tb setTable, profile, head string) string {
	t.Helper()
	for j, h := range tb.head {
		if h != head {
			continue
		}
		for _, r := range tb.rows {
			if r[0] == profile {
				return r[j]
			}
		}
	}
	t.Fatalf("table %q has no %q for %s (head %q)", tb.title, head, profile, tb.head)
	return ""
}

// The figures give TTFT and E2E at p50 and p99 from each vendor's
// headline window, and its cost per agent-hour (its $/hour over its
// agents) and per session beside $/M output; a per-session cost of
// sessions the run cut short says so.
func TestBakeoffLatencyAndCost(t *testing.T) {
	t.Parallel()
	set := loadSet(t, fixBakeoffAgentic).Set
	ts := bakeoffTables(set)
	speed, money := ts[0], ts[1]
	for i, name := range set.Profiles {
		r := set.Runs[i]
		w := r.Windows[r.Headline]
		for head, want := range map[string]float64{"TTFT ms p50": w.TTFTMs.P50, "TTFT ms p99": w.TTFTMs.P99,
			"E2E ms p50": w.E2EMs.P50, "E2E ms p99": w.E2EMs.P99} {
			if got := column(t, speed, name, head); got != num(want) {
				t.Errorf("%s %s = %q, want %q", name, head, got, num(want))
			}
		}
		agents := float64(r.Pins.Concurrency.Declared.Streams)
		if got, want := column(t, money, name, "$/agent-hour"), numfmt.Money(r.Cost.PerHourUSD/agents); got != want {
			t.Errorf("%s $/agent-hour = %q, want %q", name, got, want)
		}
		got := column(t, money, name, "$/session")
		if want := numfmt.Money(r.Cost.PerSessionUSD); !strings.Contains(got, want) || !strings.Contains(got, "sessions cut short") {
			t.Errorf("%s $/session = %q, want %s marked cut short (no session ended)", name, got, want)
		}
		if got, want := column(t, money, name, "$/M output"), numfmt.Money(r.Cost.PerMOutputTokensUSD); got != want {
			t.Errorf("%s $/M output = %q, want %q", name, got, want)
		}
	}
}

// repeated is the agentic bake-off as if run twice, each vendor's second
// run 10% faster in effective throughput (a copy, its headline window's
// own).
func repeated(t *testing.T) *results.Set {
	t.Helper()
	set := loadSet(t, fixBakeoffAgentic).Set
	again := loadSet(t, fixBakeoffAgentic).Set
	for _, r := range again.Runs {
		w := r.Windows[r.Headline]
		d := *w.EffectiveTokS
		d.P50 *= 1.1
		w.EffectiveTokS = &d
		r.Scenario.Seed++
	}
	set.Runs = append(set.Runs, again.Runs...)
	set.Profiles = append(set.Profiles, again.Profiles...)
	return set
}

// With repeats every figure is a vendor's mean with its 95% interval
// across its runs (Student's t, as a repeat set's), the title says so,
// and a point is named by its profile and seed.
func TestBakeoffRepeatIntervals(t *testing.T) {
	t.Parallel()
	set := repeated(t)
	ts := bakeoffTables(set)
	for i, name := range set.Profiles[:2] {
		a, b := set.Runs[i], set.Runs[i+2]
		xs := []float64{a.Windows[a.Headline].EffectiveTokS.P50, b.Windows[b.Headline].EffectiveTokS.P50}
		mean, half := stats.MeanCI(xs, 0.95)
		if got, want := column(t, ts[0], name, "effective tok/s p50"), num(mean)+" ± "+num(half); got != want {
			t.Errorf("%s effective = %q, want %q", name, got, want)
		}
		// A figure both runs share has a zero-width interval, still shown.
		if got := column(t, ts[0], name, "TTFT ms p99"); !strings.HasSuffix(got, " ± 0") {
			t.Errorf("%s TTFT p99 = %q, want an interval of 0", name, got)
		}
		if got := column(t, ts[1], name, "valid"); !strings.HasSuffix(got, " of 2") {
			t.Errorf("%s valid = %q, want a count of 2 runs", name, got)
		}
	}
	var b strings.Builder
	if err := WriteSetText(&b, set, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2 runs each (seeds 42–43); every figure is the mean ± its 95% interval") {
		t.Errorf("memo does not say it holds repeats:\n%s", b.String()[:400])
	}
	keys := map[string]bool{}
	for _, p := range verdict.Points(set) {
		if keys[p.Key] {
			t.Errorf("two points keyed %q", p.Key)
		}
		keys[p.Key] = true
	}
}

// A repeated bake-off names each vendor once in its title, says a pin
// text once with the runs that share it, and prints an interval of
// nothing (a cost by the hour, the same every run) as "± 0".
func TestBakeoffRepeatReadsOnce(t *testing.T) {
	t.Parallel()
	set := repeated(t)
	var b strings.Builder
	if err := WriteSetText(&b, set, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if title, _, _ := strings.Cut(out, "\n"); title != "BAKE-OFF agentic-120k: sim-local-27b vs sim-cerebras-27b" {
		t.Errorf("title %q", title)
	}
	for _, sp := range sharedPins(set) {
		if strings.HasPrefix(sp.Text, "varies by profile") {
			t.Errorf("pin %s %q: a repeated bake-off's members are runs", sp.Pin, sp.Text[:30])
		}
		seen := map[string]bool{}
		for _, part := range strings.Split(sp.Text, "; profile ") {
			_, text, _ := strings.Cut(part, ": ")
			if seen[text] {
				t.Errorf("pin %s says %q twice", sp.Pin, text)
			}
			seen[text] = true
		}
	}
	money := bakeoffTables(set)[1]
	if got := column(t, money, "sim-local-27b", "$/hour"); !strings.HasSuffix(got, " ± 0") {
		t.Errorf("$/hour %q, want an interval of 0", got)
	}
}
