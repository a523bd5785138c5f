package harness

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// ServerMetricsOff turns scraping the server metrics off
// (Config.ServerMetrics).
const ServerMetricsOff time.Duration = -1

// ParseServerMetrics reads `--server-metrics`: "off", or the scrape
// interval ("1s", "500ms"; run time).
func ParseServerMetrics(s string) (time.Duration, error) {
	if s == "off" {
		return ServerMetricsOff, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--server-metrics %q: want off or an interval such as 1s", s)
	}
	return d, nil
}

// KV-fit modes (Config.KVFit).
const (
	// KVFitWarn says whether the planned concurrency fits the server's KV
	// cache and goes on (the default).
	KVFitWarn = "warn"
	// KVFitStrict refuses to run (bad input, exit 2) when it does not.
	KVFitStrict = "strict"
)

// ParseKVFit reads `--kv-fit`.
func ParseKVFit(s string) (string, error) {
	switch s {
	case "", KVFitWarn:
		return KVFitWarn, nil
	case KVFitStrict:
		return KVFitStrict, nil
	}
	return "", fmt.Errorf("--kv-fit %q: want warn or strict", s)
}

// CheckPinNames refuses a name in names that is not one of the six
// pins' (results.PinNames); flag names the flag they came from.
func CheckPinNames(flag string, names []string) error {
	for _, n := range names {
		if !slices.Contains(results.PinNames, n) {
			return fmt.Errorf("%s %q: want one of %s", flag, n, strings.Join(results.PinNames, ", "))
		}
	}
	return nil
}

// kvFit is the KV-fit preflight of plan against what discovery found:
// the planned concurrency (closed-loop streams, agentic sessions, open
// loop's max_in_flight) × the mean prompt and output less the shared
// prefix. nil when the concurrency or the budget is unknown.
func kvFit(sc *scenario.Scenario, plan *scenario.Plan, disc record.Discovery) *results.KVFit {
	streams := plan.Streams()
	if sc.Pins.Concurrency.Mode == scenario.ModeOpen {
		streams = plan.MaxInFlight()
	}
	if streams <= 0 {
		return nil
	}
	e := plan.Expected()
	pp := sc.Pins.Prompt
	per := e.MeanPromptTokens + e.MeanOutputTokens - float64(pp.SharedPrefixTokens)
	f := results.FitKV(streams, per, pp.SharedPrefixTokens, pp.PrefixGroups, disc.KV, disc.From)
	if w := sc.Workload; f != nil && w.Agentic() && w.MaxContextTokens > 0 {
		f.WithDeepest(float64(w.MaxContextTokens) + e.MeanOutputTokens)
	}
	return f
}

// preflightKV says the KV fit before load on errOut, and refuses the run
// under KVFitStrict when the concurrency does not fit.
func preflightKV(errOut io.Writer, mode string, f *results.KVFit) error {
	if f == nil {
		if mode == KVFitStrict {
			fmt.Fprintf(errOut, "sixpin: KV fit: unknown (the server exposes no KV budget); --kv-fit strict has nothing to check\n")
		}
		return nil
	}
	line := report.KVFitLine(f)
	switch {
	case f.FillsWhenDeep():
		fmt.Fprintf(errOut, "sixpin: warning: KV fit: %s\n", line)
		return nil
	case f.Fits:
		fmt.Fprintf(errOut, "sixpin: KV fit: %s\n", line)
		return nil
	}
	if mode == KVFitStrict {
		return fmt.Errorf("%w: KV fit (--kv-fit strict): %s", ErrBadInput, line)
	}
	fmt.Fprintf(errOut, "sixpin: warning: KV fit: %s\n", line)
	return nil
}

// serverSide turns the scrapes into the results' server section for the
// run's windows (nil when nothing was scraped).
func serverSide(s endpoint.Scrapes, windows map[string]*results.Window) *results.Server {
	return results.BuildServer(s.Source, s.Every, s.Samples, s.Failures, s.LastError, windows)
}
