package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/verdict"
)

// csvDistStats are the statistics written per distribution.
var csvDistStats = []string{"mean", "min", "p10", "p50", "p90", "p95", "p99", "p99_9", "max"}

// csvDists are the distributions written per window, in column order.
var csvDists = []string{"ttft_ms", "itl_ms", "tpot_ms", "e2e_ms", "decode_tok_s", "effective_tok_s"}

// csvColumn is one column: its header and how to read it.
type csvColumn struct {
	name string
	get  func(in Input, name string, w *results.Window) string
}

// csvColumns lists every column: the file, the run, each pin (declared,
// observed, verdict), each window figure, and the run's errors and cost.
// Names are stable: spreadsheets refer to them.
func csvColumns() []csvColumn {
	run := func(name string, f func(r *results.Run) string) csvColumn {
		return csvColumn{name, func(in Input, _ string, _ *results.Window) string { return f(in.Run) }}
	}
	win := func(name string, f func(w *results.Window) string) csvColumn {
		return csvColumn{name, func(_ Input, _ string, w *results.Window) string { return f(w) }}
	}
	cols := []csvColumn{
		{"file", func(in Input, _ string, _ *results.Window) string { return in.Name }},
		run("scenario", func(r *results.Run) string { return r.Scenario.Name }),
		run("scenario_sha256", func(r *results.Run) string { return r.Scenario.SHA256 }),
		run("seed", func(r *results.Run) string { return strconv.FormatInt(r.Scenario.Seed, 10) }),
		run("sixpin_version", func(r *results.Run) string { return r.SixpinVersion }),
		run("started_at", func(r *results.Run) string { return r.StartedAt.UTC().Format(time.RFC3339) }),
		run("target_profile", func(r *results.Run) string { return r.Target.Profile }),
		run("target_endpoint", func(r *results.Run) string { return r.Target.Endpoint }),
		run("target_model", func(r *results.Run) string { return r.Target.Model }),
		run("simulated", func(r *results.Run) string { return strconv.FormatBool(r.Target.Simulated) }),
		run("valid", func(r *results.Run) string { return strconv.FormatBool(r.Valid) }),
		run("incomplete", func(r *results.Run) string { return strconv.FormatBool(r.Incomplete) }),

		run("model_name", func(r *results.Run) string { return r.Pins.Model.Declared.Name }),
		run("model_params_b", func(r *results.Run) string { return csvOpt(r.Pins.Model.Declared.ParamsB) }),
		run("model_active_params_b", func(r *results.Run) string { return csvOpt(r.Pins.Model.Declared.ActiveParamsB) }),
		run("model_dtype", func(r *results.Run) string { return r.Pins.Model.Declared.Dtype }),
		run("model_requested", func(r *results.Run) string { return r.Pins.Model.Declared.Requested }),
		run("model_observed_params_b", func(r *results.Run) string { return csvOpt(r.Pins.Model.Observed.ParamsB) }),
		run("model_verified", func(r *results.Run) string { return string(r.Pins.Model.Verified) }),

		run("prompt_dist", func(r *results.Run) string { return r.Pins.Prompt.Declared.Dist }),
		run("prompt_mean", func(r *results.Run) string { return csvNum(r.Pins.Prompt.Declared.Mean) }),
		run("prompt_tolerance_pct", func(r *results.Run) string { return csvNum(r.Pins.Prompt.Declared.TolerancePct) }),
		run("prompt_observed_p50", func(r *results.Run) string { return csvDist(r.Pins.Prompt.Observed.PerRequest, "p50") }),
		run("prompt_observed_mean", func(r *results.Run) string { return csvDist(r.Pins.Prompt.Observed.PerRequest, "mean") }),
		run("prompt_verified", func(r *results.Run) string { return string(r.Pins.Prompt.Verified) }),

		run("output_dist", func(r *results.Run) string { return r.Pins.Output.Declared.Dist }),
		run("output_mean", func(r *results.Run) string { return csvNum(r.Pins.Output.Declared.Mean) }),
		run("output_exact", func(r *results.Run) string { return strconv.FormatBool(r.Pins.Output.Declared.Exact) }),
		run("output_control", func(r *results.Run) string { return r.Pins.Output.Declared.Control }),
		run("output_observed_p50", func(r *results.Run) string { return csvDist(r.Pins.Output.Observed.PerRequest, "p50") }),
		run("output_observed_mean", func(r *results.Run) string { return csvDist(r.Pins.Output.Observed.PerRequest, "mean") }),
		run("output_verified", func(r *results.Run) string { return string(r.Pins.Output.Verified) }),

		run("concurrency_mode", func(r *results.Run) string { return string(r.Pins.Concurrency.Declared.Mode) }),
		run("concurrency_streams", func(r *results.Run) string { return csvInt(r.Pins.Concurrency.Declared.Streams) }),
		run("concurrency_rate_rps", func(r *results.Run) string { return csvOpt(r.Pins.Concurrency.Declared.RateRPS) }),
		run("concurrency_arrival", func(r *results.Run) string { return r.Pins.Concurrency.Declared.Arrival }),
		run("concurrency_observed_mean_in_flight", func(r *results.Run) string { return csvNum(r.Pins.Concurrency.Observed.MeanInFlight) }),
		run("concurrency_observed_max_in_flight", func(r *results.Run) string { return csvInt(r.Pins.Concurrency.Observed.MaxInFlight) }),
		run("concurrency_verified", func(r *results.Run) string { return string(r.Pins.Concurrency.Verified) }),

		run("kv_max_model_len", func(r *results.Run) string { return csvInt(r.Pins.KVCache.Declared.MaxModelLen) }),
		run("kv_gpu_memory_utilization", func(r *results.Run) string { return csvOpt(r.Pins.KVCache.Declared.GPUMemoryUtilization) }),
		run("kv_max_num_seqs", func(r *results.Run) string { return csvInt(r.Pins.KVCache.Declared.MaxNumSeqs) }),
		run("kv_batching", func(r *results.Run) string { return r.Pins.KVCache.Declared.Batching }),
		run("kv_prefix_caching", func(r *results.Run) string { return csvBool(r.Pins.KVCache.Declared.PrefixCaching) }),
		run("kv_observed_max_model_len", func(r *results.Run) string { return csvInt(r.Pins.KVCache.Observed.MaxModelLen) }),
		run("kv_observed_budget_tokens", func(r *results.Run) string { return csvInt(r.Pins.KVCache.Observed.BudgetTokens) }),
		run("kv_verified", func(r *results.Run) string { return string(r.Pins.KVCache.Verified) }),

		run("mix_input_output_ratio", func(r *results.Run) string { return csvOpt(r.Pins.Mix.Declared.InputOutputRatio) }),
		run("mix_classes", func(r *results.Run) string { return scenario.ClassesWords(r.Pins.Mix.Declared.Classes) }),
		run("mix_observed_input_output_ratio", func(r *results.Run) string { return csvNum(r.Pins.Mix.Observed.InputOutputRatio) }),
		run("mix_observed_prefill_share", func(r *results.Run) string { return csvNum(r.Pins.Mix.Observed.PrefillShare) }),
		run("mix_verified", func(r *results.Run) string { return string(r.Pins.Mix.Verified) }),

		{"window", func(_ Input, name string, _ *results.Window) string { return name }},
		win("start_s", func(w *results.Window) string { return csvNum(w.StartS) }),
		win("end_s", func(w *results.Window) string { return csvNum(w.EndS) }),
		win("duration_s", func(w *results.Window) string { return csvNum(w.DurationS) }),
		win("requests", func(w *results.Window) string { return strconv.Itoa(w.Requests) }),
		win("completed", func(w *results.Window) string { return strconv.Itoa(w.Completed) }),
		win("failed", func(w *results.Window) string { return strconv.Itoa(w.Failed) }),
		win("error_rate", func(w *results.Window) string {
			if w.Requests == 0 {
				return ""
			}
			return csvNum(float64(w.Failed) / float64(w.Requests))
		}),
		win("output_tokens", func(w *results.Window) string { return strconv.FormatInt(w.OutputTokens, 10) }),
		win("aggregate_output_tok_s", func(w *results.Window) string { return csvNum(w.AggregateOutputTokS) }),
		win("mean_in_flight", func(w *results.Window) string { return csvNum(w.MeanInFlight) }),
		win("max_in_flight", func(w *results.Window) string { return strconv.Itoa(w.MaxInFlight) }),
		win("aggregate_per_stream_tok_s", func(w *results.Window) string { return csvNum(w.AggregatePerStreamTokS) }),
		win("peak_aggregate_output_tok_s", func(w *results.Window) string { return csvOpt(w.PeakAggregateOutputTokS) }),
		win("goodput_rps", func(w *results.Window) string {
			if w.Goodput == nil {
				return ""
			}
			return csvNum(w.Goodput.RateRPS)
		}),
		win("goodput_fraction", func(w *results.Window) string {
			if w.Goodput == nil {
				return ""
			}
			return csvNum(w.Goodput.Fraction)
		}),
		win("input_output_ratio", func(w *results.Window) string { return csvNum(w.InputOutputRatio) }),
		win("prefill_share", func(w *results.Window) string { return csvNum(w.PrefillShare) }),
	}
	for _, key := range csvDists {
		m, _ := verdict.FigureOf(key)
		for _, stat := range csvDistStats {
			cols = append(cols, win(key+"_"+stat, func(w *results.Window) string { return csvDist(m.Dist(w), stat) }))
		}
	}
	cols = append(cols,
		run("run_error_rate", func(r *results.Run) string { return csvNum(r.Errors.Rate) }),
		run("run_requests", func(r *results.Run) string { return strconv.Itoa(r.Errors.Requests) }),
		run("run_failed", func(r *results.Run) string { return strconv.Itoa(r.Errors.Failed) }),
		run("cost_total_usd", func(r *results.Run) string {
			if r.Cost == nil {
				return ""
			}
			return csvNum(r.Cost.TotalUSD)
		}),
		run("cost_per_hour_usd", func(r *results.Run) string {
			if r.Cost == nil {
				return ""
			}
			return csvNum(r.Cost.PerHourUSD)
		}),
		run("cost_per_m_output_tokens_usd", func(r *results.Run) string {
			if r.Cost == nil {
				return ""
			}
			return csvNum(r.Cost.PerMOutputTokensUSD)
		}),
	)
	return cols
}

// WriteCSV writes one row per run × window (warmup, burst, steady, all),
// with a column for each pin (declared, observed, verdict) and each
// metric, for spreadsheets. Empty cells mean "not declared" or "not
// measured"; fractions are 0–1; units are in the column names.
func WriteCSV(w io.Writer, runs []Input) error {
	cw := csv.NewWriter(w)
	cols := csvColumns()
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.name
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, len(cols))
	for _, in := range runs {
		for _, name := range results.WindowNames {
			win := in.Run.Windows[name]
			if win == nil {
				continue
			}
			for i, c := range cols {
				row[i] = c.get(in, name, win)
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvNum formats v to six significant digits, without exponents for
// ordinary magnitudes.
func csvNum(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// csvOpt is csvNum, blank for zero (an optional field not set).
func csvOpt(v float64) string {
	if v == 0 {
		return ""
	}
	return csvNum(v)
}

func csvInt(v int) string {
	if v == 0 {
		return ""
	}
	return strconv.Itoa(v)
}

func csvBool(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}

func csvDist(d *results.Dist, stat string) string {
	if d == nil {
		return ""
	}
	return csvNum(verdict.StatOf(d, stat))
}
