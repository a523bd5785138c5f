package harness

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/strictyaml"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/sim"
)

// The default simulator must match the field report's local 27B: roughly
// 150–160 tok/s single-stream decode at short context.
func TestSimLocal27BCalibration(t *testing.T) {
	t.Parallel()
	p, err := profiles.Embedded(profiles.DefaultSimulator)
	if err != nil {
		t.Fatal(err)
	}
	c, err := SimConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Defaults(c)
	r := cfg.Roofline
	if got := r.SingleStreamDecodeTokS(1000); got < 150 || got > 160 {
		t.Errorf("single-stream decode at 1K context = %.1f tok/s, want 150–160", got)
	}
	// Long outputs slow down as the KV cache grows (steady below burst).
	if short, long := r.SingleStreamDecodeTokS(1000), r.SingleStreamDecodeTokS(120_000); long >= short {
		t.Errorf("decode at 120K (%.1f) not below decode at 1K (%.1f)", long, short)
	}
	if cfg.MaxModelLen != 262144 {
		t.Errorf("max_model_len = %d, want 256K", cfg.MaxModelLen)
	}
}

// Every embedded simulator profile's sim: section decodes.
func TestEmbeddedSimulatorsDecode(t *testing.T) {
	t.Parallel()
	list, err := profiles.List()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range list {
		if !p.Simulated() {
			continue
		}
		n++
		if _, err := SimulatorOf(p); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
	if n < 2 {
		t.Errorf("%d simulator profiles, want the calibrated pair at least", n)
	}
}

// The simulator's own checks and its bounds name file:line:col and the
// field inside sim:, as the profile's other errors do.
func TestSimConfigErrorsAtTheirFields(t *testing.T) {
	t.Parallel()
	p, err := profiles.Resolve("testdata/sim-fields.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = SimConfig(p)
	var list strictyaml.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("SimConfig = %v, want an ErrorList", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	want := []string{
		"testdata/sim-fields.yaml:4:17: sim.fixed.ttft: must be ≥ 0, got -1s",
		"testdata/sim-fields.yaml:5:20: sim.reasoning_share: must be in [0, 1], got 2",
		"testdata/sim-fields.yaml:6:21: sim.tokens_per_chunk: must be ≤ 10,000,000 tokens (got 1000000000000000000)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := StartSimulator(p, "127.0.0.1:0", 0); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "sim.fixed.ttft") {
		t.Errorf("StartSimulator = %v, want bad input naming the field", err)
	}
}

// An unknown key or a bad value inside sim: is an error at its position.
func TestSimConfigErrorsAtTheirPositions(t *testing.T) {
	t.Parallel()
	for yaml, want := range map[string]string{
		"name: mine\nkind: simulator\nsim:\n  modle: x\n":    "mine.yaml:4:3: sim.modle:",
		"name: mine\nkind: simulator\nsim: {timing: warp}\n": "mine.yaml:3:15: sim.timing: must be",
		// The one error is max_model_len's: kv_budget_tokens, unset,
		// derives from it.
		"name: mine\nkind: simulator\nsim: {timing: none, max_model_len: -1}\n": "mine.yaml:3:36: sim.max_model_len: must be > 0, got -1",
	} {
		p, err := profiles.Parse("mine.yaml", []byte(yaml))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := SimConfig(p); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("SimConfig(%q) = %v, want %s …", yaml, err, want)
		}
	}
}
