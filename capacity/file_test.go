package capacity

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// sample is a small capacity file: one tier, found at 2 (passing at 1
// and 2, failing at 3, each confirmed), every point holding a real run.
func sample(t *testing.T) *File {
	t.Helper()
	run, err := results.ReadFile("../results/testdata/good.json")
	if err != nil {
		t.Fatal(err)
	}
	tier, err := verdict.ParseTierFlag("interactive: ttft_ms.p90 <= 2000")
	if err != nil {
		t.Fatal(err)
	}
	f := &File{Schema: Schema, Scenario: "s.yaml", ScenarioName: "s", Profile: "sim",
		Plan:       Plan{Axis: Axis{Kind: AxisStreams, Pin: "concurrency.streams", Min: 1, Max: 64}, Tiers: []verdict.Tier{tier}, Start: 1},
		Deployment: Deployment{GPUs: 1}}
	s := NewSearch(f.Plan.Axis, 1, []string{"interactive"})
	for {
		v, role, judged, ok := s.Next()
		if !ok {
			break
		}
		out := verdict.TierVerdict{Tier: "interactive", Outcome: verdict.Passed, Decided: true, First: -1,
			Conditions: []verdict.CondVerdict{{Condition: tier.Conditions[0], Outcome: verdict.Passed, Decided: true}}}
		if v > 2 {
			out.Outcome, out.First, out.Conditions[0].Outcome = verdict.Failed, 0, verdict.Failed
		}
		p := Point{Value: v, Role: role, Judged: judged, Valid: true, Verdicts: []verdict.TierVerdict{out}, Run: run, Curve: CurveOf(run)}
		s.Record(p)
		f.Points = append(f.Points, p)
	}
	Fill(f)
	return f
}

func TestFileRoundTrip(t *testing.T) {
	t.Parallel()
	f := sample(t)
	a := f.Answers[0]
	if a.Kind != Found || a.Lo != 2 || a.Hi != 3 || a.Binding == nil || a.Binding.At != 3 || a.PerDeployment == nil || a.PerDeployment.PerGPU != 2 {
		t.Fatalf("answer %+v", a)
	}
	path := filepath.Join(t.TempDir(), "c.json")
	if err := WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	back, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Points) != len(f.Points) || back.Answers[0].Lo != 2 || back.Points[0].Run == nil || back.Plan.Tiers[0].String() != "interactive: ttft_ms.p90 <= 2000" {
		t.Errorf("read back %+v", back.Answers)
	}
}

// A malformed file is refused with the file, the field and its place.
func TestReadRefuses(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.json")
	if err := WriteFile(path, sample(t)); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, from, to, want string
	}{
		{"another schema", `"schema": "sixpin/capacity/v1"`, `"schema": "sixpin/result/v1"`, `c.json:2:13: schema: want "sixpin/capacity/v1"`},
		{"a bad condition", `"metric": "ttft_ms"`, `"metric": "ttft"`, "plan.tiers[0].conditions[0]: unknown metric"},
		{"an unknown tier judged", `"judged": [
        "interactive"`, `"judged": [
        "batch"`, `points[0].judged: unknown tier "batch"`},
		{"answers that do not follow", `"kind": "found"`, `"kind": "at_least"`, "answers[0]: interactive at_least [2, 3) does not follow from the points"},
		{"a run that does not hold", `"schema": "sixpin/result/v1"`, `"schema": "sixpin/other"`, "points[0].run.schema"},
		{"a value off the axis", `"value": 1,`, `"value": 100,`, "points[0].value: 100 lies outside the axis"},
	} {
		data := bytes.Replace(good, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(data, good) {
			t.Fatalf("%s: %q not in the file", c.name, c.from)
		}
		_, err := Read("c.json", data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
