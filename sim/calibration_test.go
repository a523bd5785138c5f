package sim

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// loadProfileSim reads the sim: section of a profile in ../profiles.
func loadProfileSim(t *testing.T, name string) Config {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "profiles", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Sim *Config `yaml:"sim"`
	}
	if err := yaml.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if p.Sim == nil {
		t.Fatalf("%s: no sim section", name)
	}
	if err := p.Sim.Validate(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return Defaults(*p.Sim)
}

// turnFigures is one request's modelled timing, from its arrival.
type turnFigures struct {
	ttft, e2e time.Duration
	out       int
}

func (f turnFigures) effective() float64    { return float64(f.out) / f.e2e.Seconds() }
func (f turnFigures) decode() float64       { return float64(f.out-1) / (f.e2e - f.ttft).Seconds() }
func (f turnFigures) prefillShare() float64 { return f.ttft.Seconds() / f.e2e.Seconds() }

// agenticTurn models one turn of an agentic loop alone on the engine, in
// virtual time: a prompt of prompt tokens whose first cached tokens an
// earlier turn left in the prefix cache, and out output tokens. TTFT and
// E2E include the request overhead.
func agenticTurn(t *testing.T, c Config, prompt, cached, out int) turnFigures {
	t.Helper()
	s := newSched(c)
	bs := c.BlockSize
	history := newSeq(cached, 1, chain("history", cached/bs))
	s.add(history)
	turn := newSeq(prompt, out, chain("history", prompt/bs))
	var now, start time.Duration
	added := false
	var f turnFigures
	f.out = out
	for {
		if !added && history.generated == history.out {
			s.add(turn)
			added, start = true, now
		}
		st := s.plan()
		if st.idle() {
			if !added {
				t.Fatal("the history never finished")
			}
			break
		}
		now += st.dur
		s.apply(st)
		if turn.generated == 1 && f.ttft == 0 {
			f.ttft = now - start
		}
	}
	if got := int(turn.cached.Load()); got != cached/bs*bs {
		t.Fatalf("the turn found %d tokens cached, want %d", got, cached/bs*bs)
	}
	over := c.scaled(c.Roofline.RequestOverhead)
	f.e2e = now - start + over
	f.ttft += over
	return f
}

// TestCalibration checks the field report's figures (CONTEXT §1) against
// the two 27B profiles: pure arithmetic on the roofline, in virtual time.
func TestCalibration(t *testing.T) {
	local := loadProfileSim(t, "sim-local-27b")
	cloud := loadProfileSim(t, "sim-cerebras-27b")

	within := func(what string, got, lo, hi float64) {
		t.Helper()
		if got < lo || got > hi {
			t.Errorf("%s = %.3g, want %g–%g", what, got, lo, hi)
		}
	}
	// Single-stream decode: the local 27B's ~157 tok/s; the cloud's
	// ~1,850 below 20K context and ~1,040 at long context, which for an
	// agentic loop (CONTEXT §1: P50 context 50K–120K) is its median turn,
	// ~50–60K.
	l1, l60 := local.Roofline.SingleStreamDecodeTokS(1000), local.Roofline.SingleStreamDecodeTokS(60_000)
	c1, c60 := cloud.Roofline.SingleStreamDecodeTokS(1000), cloud.Roofline.SingleStreamDecodeTokS(60_000)
	t.Logf("decode tok/s at 1K / 60K context: local %.0f / %.0f, cloud %.0f / %.0f", l1, l60, c1, c60)
	within("local decode at 1K (tok/s)", l1, 150, 165)
	within("local decode at 60K (tok/s)", l60, 150, 165)
	within("cloud decode at 1K (tok/s)", c1, 1750, 1950)
	within("cloud decode at 60K (tok/s)", c60, 990, 1090)
	// Pure decode at long context: the report's 1,040 vs 157 (6.6×).
	within("decode ratio at 60K, cloud/local", c60/l60, 6, 7.5)

	// The median turn of scenarios/agentic-120k.yaml: a 52K prompt whose
	// last answer (~300 tokens) and tool result (~2,500) are new, the rest
	// cached; 300 tokens out; alone.
	const prompt, out = 52_000, 300
	cached := prompt - 2_800
	lt := agenticTurn(t, local, prompt, cached, out)
	ct := agenticTurn(t, cloud, prompt, cached, out)
	for _, x := range []struct {
		name string
		f    turnFigures
	}{{"local", lt}, {"cloud", ct}} {
		t.Logf("%s turn: TTFT %v, E2E %v, effective %.0f tok/s, decode %.0f tok/s, prefill share %.2f",
			x.name, x.f.ttft.Round(time.Millisecond), x.f.e2e.Round(time.Millisecond), x.f.effective(), x.f.decode(), x.f.prefillShare())
	}
	t.Logf("turn ratios cloud/local: effective %.2f, decode %.2f", ct.effective()/lt.effective(), ct.decode()/lt.decode())
	within("effective ratio, cloud/local", ct.effective()/lt.effective(), 3, 4)
	within("cloud prefill share of the turn", ct.prefillShare(), 0.45, 0.65)

	// Context windows and rate limits as the report met them.
	if local.MaxModelLen != 262144 || cloud.MaxModelLen != 131072 {
		t.Errorf("max_model_len local %d, cloud %d", local.MaxModelLen, cloud.MaxModelLen)
	}
	if !*local.PrefixCaching || !*cloud.PrefixCaching {
		t.Error("prefix caching off")
	}
	if want := (RateLimits{RequestsPerMinute: 450, TokensPerMinute: 450_000, UncachedTokensPerMinute: 150_000}); cloud.RateLimits != want {
		t.Errorf("cloud rate limits %+v, want %+v", cloud.RateLimits, want)
	}
}
