package verdict

import (
	"strings"
	"testing"

	"github.com/sixpin/sixpin/scenario"
)

func TestParseCondition(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string
		allowed  float64
	}{
		{"ttft_ms.p90<=2000", "ttft_ms.p90 <= 2000", 0.10},
		{" decode_tok_s.p10 >= 30 ", "decode_tok_s.p10 >= 30", 0.10},
		{"e2e_ms.p99 ≤ 60000", "e2e_ms.p99 <= 60000", 0.01},
		{"effective_tok_s.p50>=12.5", "effective_tok_s.p50 >= 12.5", 0.5},
		{"error_rate <= 1%", "error_rate <= 1%", 0.01},
		{"http_429_rate<=0.05", "http_429_rate <= 5%", 0.05},
		{"lifetime_min.p50 >= 10", "lifetime_min.p50 >= 10", 0.5},
		{"itl_ms.p99_9 <= 80", "itl_ms.p99_9 <= 80", 0.001},
	} {
		got, err := ParseCondition(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got.String() != c.want || !near(got.Allowed(), c.allowed) {
			t.Errorf("%q: %q allowing %v, want %q allowing %v", c.in, got, got.Allowed(), c.want, c.allowed)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%q does not read back: %v", got, err)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

func TestParseConditionRefuses(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ttft_ms.p90 < 2000":      "must be <= (at most) or >= (at least)",
		"ttft_ms.p90 2000":        "want METRIC.STAT <= VALUE",
		"ttft.p90 <= 2000":        `unknown metric "ttft"`,
		"ttft_ms <= 2000":         "name a percentile, e.g. ttft_ms.p90",
		"ttft_ms.mean <= 2000":    "a tier bounds a percentile",
		"ttft_ms.p90 >= 2000":     "ttft_ms is better lower: bound it from above",
		"decode_tok_s.p10 <= 30":  "decode_tok_s is better higher: bound it from below",
		"error_rate.p90 <= 1%":    "no statistic after it",
		"error_rate <= 0":         "no sample can confirm a rate of exactly 0",
		"error_rate <= 2":         "must be a share above 0 and below 100%",
		"ttft_ms.p90 <= 2s":       `the bound must be a number (got "2s")`,
		"ttft_ms.p90 <= 20%":      "ttft_ms.p90 is in ms, not a percentage",
		"ttft_ms.p90 <= -1":       "must not be negative",
		"server_queue_ms.p90 <= ": "the bound must be a number",
	} {
		_, err := ParseCondition(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func TestParseTierFlag(t *testing.T) {
	t.Parallel()
	tier, err := ParseTierFlag("interactive: ttft_ms.p90<=2000, decode_tok_s.p10>=30")
	if err != nil {
		t.Fatal(err)
	}
	if tier.String() != "interactive: ttft_ms.p90 <= 2000, decode_tok_s.p10 >= 30" || tier.Source != "--tier" {
		t.Errorf("%q from %s", tier, tier.Source)
	}
	for in, want := range map[string]string{
		"ttft_ms.p90<=2000":                     "want NAME: CONDITION",
		"interactive:":                          "--tier interactive: condition 1: ",
		"interactive: ttft_ms.p90<=2000, bogus": `--tier interactive: condition 2: "bogus": want METRIC.STAT`,
	} {
		_, err := ParseTierFlag(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// A tiers file keeps its order, takes a list or one string per tier,
// and names every problem at file:line:col, the string form's
// conditions each at its own column.
func TestParseTiers(t *testing.T) {
	t.Parallel()
	src := "interactive: [ttft_ms.p90 <= 2000, decode_tok_s.p10 >= 30]\n" +
		"batch: \"e2e_ms.p90 <= 60000, error_rate <= 1%\"\n" +
		"agents:\n  - ttft_ms.p99 <= 8000\n"
	tiers, err := ParseTiers("tiers.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tr := range tiers {
		names = append(names, tr.String())
	}
	want := "interactive: ttft_ms.p90 <= 2000, decode_tok_s.p10 >= 30|batch: e2e_ms.p90 <= 60000, error_rate <= 1%|agents: ttft_ms.p99 <= 8000"
	if strings.Join(names, "|") != want {
		t.Errorf("tiers %q", names)
	}
	if tiers[1].Conditions[1].Source != "tiers.yaml:2:30" || tiers[2].Source != "tiers.yaml:3:1" {
		t.Errorf("sources %q, %q", tiers[1].Conditions[1].Source, tiers[2].Source)
	}

	bad := "interactive: [ttft_ms.p90 <= 2000, ttft.p90 <= 5]\n" +
		"batch: \"e2e_ms.p90 <= 60000, error_rate < 1%\"\n" +
		"empty: []\n" +
		"number: [42]\n"
	_, err = ParseTiers("tiers.yaml", []byte(bad))
	if err == nil {
		t.Fatal("bad tiers accepted")
	}
	for _, want := range []string{
		`tiers.yaml:1:36: interactive[1]: unknown metric "ttft"`,
		`tiers.yaml:2:30: batch[1]: "error_rate < 1%": the comparison must be`,
		"tiers.yaml:3:1: empty: no condition",
		"tiers.yaml:4:10: number[0]: must be a condition",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q:\n%v", want, err)
		}
	}
	if _, err := ParseTiers("tiers.yaml", []byte("  \n")); err == nil || !strings.Contains(err.Error(), "no tiers") {
		t.Errorf("empty file: %v", err)
	}
}

func TestSLOTier(t *testing.T) {
	t.Parallel()
	tier, ok := SLOTier(scenario.SLO{TTFTMs: 5000, TPOTMs: 50, MaxErrorRate: 0.02})
	if !ok || tier.String() != "slo: ttft_ms.p90 <= 5000, tpot_ms.p90 <= 50, error_rate <= 2%" {
		t.Errorf("%v %q", ok, tier)
	}
	if _, ok := SLOTier(scenario.SLO{}); ok {
		t.Error("an empty slo is a tier")
	}
}

// A tier naming what the run cannot measure is refused, naming the tier
// and the metric.
func TestCheckTiers(t *testing.T) {
	t.Parallel()
	life, _ := ParseTierFlag("long: lifetime_min.p50 >= 10")
	queue, _ := ParseTierFlag("snappy: server_queue_ms.p90 <= 100")
	if err := CheckTiers([]Tier{life}, Measurable{}); err == nil || !strings.Contains(err.Error(), "tier long: lifetime_min.p50: this run cannot measure it") {
		t.Errorf("lifetime without sessions: %v", err)
	}
	if err := CheckTiers([]Tier{queue}, Measurable{Sessions: true}); err == nil || !strings.Contains(err.Error(), "tier snappy: server_queue_ms.p90") {
		t.Errorf("queue without timings: %v", err)
	}
	if err := CheckTiers([]Tier{life, queue}, Measurable{Sessions: true, ServerQueue: true}); err != nil {
		t.Error(err)
	}
	if err := CheckTiers([]Tier{life, life}, Measurable{Sessions: true}); err == nil || !strings.Contains(err.Error(), "declared twice") {
		t.Errorf("twice: %v", err)
	}
}
