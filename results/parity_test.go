package results

import (
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/fielderr"
	"github.com/sixpin/sixpin/scenario"
)

// The parity evidence reads back as written, and a file whose evidence
// contradicts itself or the file's tokens is refused at the field.
func TestParityReadsBackAndIsChecked(t *testing.T) {
	t.Parallel()
	good := mustRead(t, "testdata/good.json")
	served := map[string]any{"requests": 20, "input_tokens": 1983, "cached_input_tokens": 0, "output_tokens": 640}
	planned := map[string]any{"requests": 20, "input_tokens": 2000, "cached_input_tokens": 0, "output_tokens": 640,
		"sequence_sha256": strings.Repeat("ab", 32), "encoding": scenario.SequenceEncoding}
	with := func(change func(p map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		p := map[string]any{"served": maps.Clone(served), "planned": maps.Clone(planned)}
		change(p)
		m["parity"] = p
		data, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	run, err := Read("good.json", with(func(map[string]any) {}))
	if err != nil {
		t.Fatal(err)
	}
	if p := run.Parity; p == nil || p.Planned == nil || p.Planned.InputTokens != 2000 || p.Served.OutputTokens != 640 || p.Planned.Encoding != "sixpin-seq-v1" {
		t.Fatalf("parity read back as %+v", run.Parity)
	}
	for _, c := range []struct {
		name   string
		change func(p map[string]any)
		want   string
	}{
		{"served is not the file's tokens", func(p map[string]any) { p["served"].(map[string]any)["output_tokens"] = 641 },
			"parity.served: must be the file's tokens (requests 20, input 1983, cached_input 0, output 640)"},
		{"a digest that is none", func(p map[string]any) { p["planned"].(map[string]any)["sequence_sha256"] = "d14eb2" },
			`parity.planned.sequence_sha256: want 64 lowercase hex digits, got "d14eb2"`},
		{"more cached than input", func(p map[string]any) { p["planned"].(map[string]any)["cached_input_tokens"] = 3000 },
			"parity.planned.cached_input_tokens: must be ≤ input_tokens (got 3000 > 2000)"},
		{"a negative count", func(p map[string]any) { p["planned"].(map[string]any)["requests"] = -1 },
			"parity.planned.requests: must be ≥ 0 (got -1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Read("p.json", with(c.change))
			var list fielderr.List
			if !errors.As(err, &list) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Read = %v, want %q", err, c.want)
			}
			if list[0].Line == 0 {
				t.Errorf("%v has no position", list[0])
			}
		})
	}
}

// Merged shards keep the whole plan's evidence when every shard planned
// the same, and drop it when they disagree.
func TestMergedParity(t *testing.T) {
	t.Parallel()
	p := &PlannedTokens{TokenTotals: TokenTotals{Requests: 4, InputTokens: 40, OutputTokens: 8}, SequenceSHA256: strings.Repeat("0", 64), Encoding: scenario.SequenceEncoding}
	q := *p
	q.InputTokens = 41
	planned := func(a, b *PlannedTokens) *PlannedTokens {
		t.Helper()
		x, y := shardRun(t, 0, 2, 4, 0), shardRun(t, 1, 2, 4, 0)
		x.Parity, y.Parity = &Parity{Planned: a}, &Parity{Planned: b}
		m, err := Merge(shards(x, y), MergeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return m.Parity.Planned
	}
	if got := planned(p, p); got == nil || *got != *p {
		t.Errorf("agreeing shards: %+v", got)
	}
	if got := planned(p, &q); got != nil {
		t.Errorf("disagreeing shards kept %+v", got)
	}
	if got := planned(p, nil); got != nil {
		t.Errorf("a shard without evidence kept %+v", got)
	}
}
