package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sixpin/sixpin/harness/internal/live"
	"github.com/sixpin/sixpin/internal/headless"
	"github.com/sixpin/sixpin/internal/testserve"
)

// syncBuffer is a buffer that the run writes and the test reads at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func getSnapshot(t *testing.T, url string) live.Snapshot {
	t.Helper()
	resp, err := http.Get(url + "snapshot")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s live.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// During a run, the live page loads in headless Chromium without a
// console message and its numbers move between two reads; the metrics
// scrape over HTTP and parse as Prometheus exposition; at the end the
// page shows the final report and, with --live-keep, stays up until the
// context ends.
func TestLiveDuringARun(t *testing.T) {
	t.Parallel()
	bin := headless.Find()
	if bin == "" {
		t.Skip("no chromium binary (apt-get install chromium; .ci/run installs it)")
	}
	// The browser starts before the run: on a loaded machine its start
	// alone can outlast the run's 10 s of wall time.
	bctx, bcancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer bcancel()
	b, err := headless.Start(bctx, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	errOut := &syncBuffer{}
	cfg := Config{ScenarioPath: "testdata/live.yaml", TimeScale: 0.1, Output: filepath.Join(t.TempDir(), "r.json"),
		Live: "127.0.0.1:0", LiveKeep: true, MetricsAddr: "127.0.0.1:0",
		Getenv: func(string) string { return "" }, Out: &bytes.Buffer{}, ErrOut: errOut}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() {
		_, err := Run(ctx, context.Background(), cfg)
		ran <- err
	}()
	var liveURL, metricsURL string
	urls := regexp.MustCompile(`(?m)^sixpin: (live page|metrics for Prometheus) at (\S+)`)
	testserve.WaitFor(t, "the live page's and the metrics' addresses", func() bool {
		for _, m := range urls.FindAllStringSubmatch(errOut.String(), -1) {
			if m[1] == "live page" {
				liveURL = m[2]
			} else {
				metricsURL = m[2]
			}
		}
		return liveURL != "" && metricsURL != ""
	})

	if err := b.Navigate(bctx, liveURL); err != nil {
		t.Fatal(err)
	}
	type reading struct {
		Seq, State, Elapsed, Tokens, Done string
	}
	read := func() reading {
		t.Helper()
		var r reading
		if err := b.Eval(bctx, `({Seq: document.body.dataset.seq, State: document.getElementById("state").textContent,
			Elapsed: document.getElementById("elapsed").textContent, Tokens: document.getElementById("tokens").textContent,
			Done: document.getElementById("requests").textContent})`, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	var first reading
	testserve.WaitFor(t, "the page's first snapshot of the running run", func() bool {
		first = read()
		return first.Seq != "0" && first.State == "running" && first.Tokens != "0"
	})
	var second reading
	testserve.WaitFor(t, "the page's next snapshot", func() bool {
		second = read()
		return second.Seq != first.Seq
	})
	if second.Elapsed == first.Elapsed || second.Tokens == first.Tokens {
		t.Errorf("the page's numbers did not move between two snapshots: %+v then %+v", first, second)
	}

	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	if s := getSnapshot(t, liveURL); s.State != "running" {
		t.Fatalf("the run ended before the scrape could be judged mid-run (state %s): lengthen testdata/live.yaml", s.State)
	}
	for _, name := range []string{"sixpin_requests_total", "sixpin_output_tokens_total", "sixpin_prompt_tokens_total", "sixpin_in_flight",
		"sixpin_schedule_lag_seconds", "sixpin_ttft_seconds", "sixpin_itl_seconds", "sixpin_e2e_seconds"} {
		mf := fams[name]
		if mf == nil || len(mf.Metric) == 0 {
			t.Errorf("mid-run scrape lacks %s", name)
			continue
		}
		labels := map[string]string{}
		for _, l := range mf.Metric[0].Label {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["scenario"] != "live" {
			t.Errorf("%s labels %v, want scenario live", name, labels)
		}
	}
	if v := fams["sixpin_output_tokens_total"].GetMetric()[0].GetCounter().GetValue(); v <= 0 {
		t.Errorf("sixpin_output_tokens_total = %v mid-run", v)
	}
	if g := fams["sixpin_in_flight"].GetMetric()[0].GetGauge().GetValue(); g != 4 {
		t.Errorf("sixpin_in_flight = %v mid-run, want the 4 closed-loop streams", g)
	}

	testserve.WaitFor(t, "the final report on the page", func() bool {
		var shown bool
		_ = b.Eval(bctx, `(() => { const f = document.getElementById("report");
			return !document.getElementById("final").hidden && !!f.contentDocument && f.contentDocument.body.innerText.includes("Pin card"); })()`, &shown)
		return shown
	})
	if msgs := b.Console(); len(msgs) > 0 {
		t.Errorf("the live page logged to the console:\n%s", strings.Join(msgs, "\n"))
	}
	select {
	case err := <-ran:
		t.Fatalf("Run returned before its context ended, despite LiveKeep: %v", err)
	default:
	}
	cancel()
	if err := <-ran; err != nil {
		t.Errorf("Run: %v", err)
	}
	if !strings.Contains(errOut.String(), "stays up at") {
		t.Errorf("Run did not say the page stays up:\n%s", errOut.String())
	}
}

// The live page and the metrics follow one rule: loopback unless the
// user says remote (--live-remote, --metrics-remote, each for its own
// server), a bare :PORT being 127.0.0.1 until then; and each says on
// stderr where it listens and who can reach it.
func TestObserversListenLoopbackUnlessRemote(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cfg  Config
		want []string // lines on stderr; or the error
		err  string
	}{
		{"bare ports", Config{Live: ":0", MetricsAddr: ":0"}, []string{
			`sixpin: metrics for Prometheus at http://127\.0\.0\.1:\d+/metrics \(this machine only\)`,
			`sixpin: live page at http://127\.0\.0\.1:\d+/ \(this machine only\)`}, ""},
		{"metrics remote", Config{MetricsAddr: ":0", MetricsRemote: true}, []string{
			`sixpin: metrics for Prometheus at http://127\.0\.0\.1:\d+/metrics \(every interface: other machines reach it too\)`}, ""},
		{"live remote", Config{Live: ":0", LiveRemote: true}, []string{
			`sixpin: live page at http://127\.0\.0\.1:\d+/ \(every interface: other machines reach it too\)`}, ""},
		{"metrics on every interface", Config{MetricsAddr: "0.0.0.0:0"}, nil, "--metrics-addr 0.0.0.0:0: not a loopback address"},
		{"--live-remote does not open the metrics", Config{MetricsAddr: "0.0.0.0:0", Live: "127.0.0.1:0", LiveRemote: true}, nil, "allow it with --metrics-remote"},
		{"--metrics-remote without --metrics-addr", Config{MetricsRemote: true}, nil, "--metrics-remote needs --metrics-addr"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var errOut bytes.Buffer
			c.cfg.ErrOut = &errOut
			o, err := startObservers(c.cfg)
			if c.err != "" {
				if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want bad input containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			o.close()
			for _, w := range c.want {
				if !regexp.MustCompile(`(?m)^` + w + `$`).MatchString(errOut.String()) {
					t.Errorf("stderr %q, want a line %s", errOut.String(), w)
				}
			}
		})
	}
}
