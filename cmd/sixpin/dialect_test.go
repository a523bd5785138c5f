package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// `sixpin report --dialect`: a run on the simulator reported in each
// peer's definitions, as text (its pin card, each figure with its
// definition) and as JSON (name, value, unit, definition per figure); an
// unknown dialect, a format it does not write and a file from before
// the peers' figures was recorded each say so in one line.
func TestReportDialect(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.json")
	if code, out, errOut := sixpin(t, nil, "run", "testdata/tiny.yaml", "--profile", "sim-instant", "-o", path); code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	for dialect, want := range map[string][]string{
		"vllm":     {"IN vLLM's DEFINITIONS", "Mean TPOT (ms):", "first token excluded", "Request throughput (req/s):", "Request goodput (req/s):", "ttft:1000", "@009e6d4a"},
		"aiperf":   {"inter_token_latency p99:", "output_token_throughput_per_user mean:", "goodput:", "@db4f6397"},
		"guidellm": {"time_per_output_token_ms mean:", "first token INCLUDED", "v0.5.4"},
		"mlperf":   {"tps_per_user:", "1000 / TPOT p90 (ms)", "e2e_interactivity:", "Σ output tokens / Σ turn E2E"},
	} {
		code, out, errOut := sixpin(t, nil, "report", path, "--dialect", dialect)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", dialect, code, errOut)
		}
		for _, w := range append(want, "PIN CARD", "window:      every request of the run", "↳ ") {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the report lacks %q:\n%s", dialect, w, out)
			}
		}
		if strings.Contains(out, "unavailable") {
			t.Errorf("%s: a figure is unavailable:\n%s", dialect, out)
		}
	}

	code, out, errOut := sixpin(t, nil, "report", path, "--dialect", "mlperf", "--format", "json")
	if code != ExitOK {
		t.Fatalf("json: exit %d: %s", code, errOut)
	}
	var got struct {
		Dialect string `json:"dialect"`
		Window  string `json:"window"`
		Pins    []struct {
			Pin, Verified string
		} `json:"pins"`
		Figures []struct {
			Name       string   `json:"name"`
			Value      *float64 `json:"value"`
			Unit       string   `json:"unit"`
			Definition string   `json:"definition"`
		} `json:"figures"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if got.Dialect != "mlperf" || len(got.Pins) != 7 || len(got.Figures) == 0 || got.Window == "" {
		t.Errorf("json: %+v", got)
	}
	for _, f := range got.Figures {
		if f.Value == nil || f.Unit == "" || f.Definition == "" {
			t.Errorf("json figure %+v", f)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", path, "--dialect", "locust"}, `--dialect "locust": want one of vllm, aiperf, guidellm, mlperf`},
		{[]string{"report", path, "--dialect", "vllm", "--format", "md"}, `--format "md": want one of text, json`},
		{[]string{"report", path, "--dialect", "vllm", "--metric", "ttft"}, "--metric re-renders a waterfall"},
	} {
		code, _, errOut := sixpin(t, nil, c.args...)
		if code != ExitBadInput || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, %q: want exit %d and one line with %q", c.args, code, errOut, ExitBadInput, c.want)
		}
	}

	// A file from before the peers' figures were recorded: every figure
	// unavailable, none made up.
	code, out, errOut = sixpin(t, nil, "report", fixBase, "--dialect", "vllm", "--format", "json")
	if code != ExitOK {
		t.Fatalf("old file: exit %d: %s", code, errOut)
	}
	var old struct {
		Unavailable string `json:"unavailable"`
		Figures     []struct {
			Value       *float64 `json:"value"`
			Unavailable string   `json:"unavailable"`
		} `json:"figures"`
	}
	if err := json.Unmarshal([]byte(out), &old); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(old.Unavailable, "no peer figures") || len(old.Figures) == 0 {
		t.Errorf("old file: %s", out)
	}
	for _, f := range old.Figures {
		if f.Value != nil || f.Unavailable == "" {
			t.Errorf("old file: a figure %+v", f)
		}
	}
}
