package exposition

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sixpin/sixpin/record"
)

// scrape reads the exposition over HTTP in the text format (as a classic
// scraper does) or the protobuf one (as a native-histogram scraper does).
func scrape(t *testing.T, url string, proto bool) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if proto {
		req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	fams := map[string]*dto.MetricFamily{}
	if !proto {
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err = p.TextToMetricFamilies(resp.Body)
		if err != nil {
			t.Fatalf("parse the text exposition: %v", err)
		}
		return fams
	}
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			return fams
		} else if err != nil {
			t.Fatalf("decode the protobuf exposition: %v", err)
		}
		fams[mf.GetName()] = &mf
	}
}

func labelsOf(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// Observed records come out of the exposition as counters by outcome and
// class, token counters, the in-flight gauge read at scrape time, and
// histograms that are native (protobuf) with classic buckets (text).
func TestExposition(t *testing.T) {
	s, err := Start("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var inflight atomic.Int64
	inflight.Store(3)
	run := s.Run(Labels{Scenario: "smoke", Profile: "sim"}, inflight.Load)
	ok := &record.Record{Scheduled: 0, Sent: time.Millisecond, End: 500 * time.Millisecond,
		Chunks:   []record.Chunk{{At: 100 * time.Millisecond, Tokens: 1}, {At: 200 * time.Millisecond, Tokens: 2}},
		HasUsage: true, Usage: record.Usage{PromptTokens: 40, CompletionTokens: 3}}
	bad := &record.Record{Sent: 0, End: time.Second, Err: record.ErrHTTP5xx}
	run.Observe(ok)
	run.Observe(bad)

	fams := scrape(t, s.URL(), false)
	for name, want := range map[string]float64{"sixpin_output_tokens_total": 3, "sixpin_prompt_tokens_total": 40} {
		mf := fams[name]
		if mf == nil || mf.GetType() != dto.MetricType_COUNTER || mf.Metric[0].GetCounter().GetValue() != want {
			t.Errorf("%s = %v, want counter %v", name, mf, want)
		}
	}
	byClass := map[string]float64{}
	for _, m := range fams["sixpin_requests_total"].GetMetric() {
		l := labelsOf(m)
		if l["scenario"] != "smoke" || l["profile"] != "sim" || l["run_id"] != "" || l["shard"] != "" {
			t.Errorf("labels %v", l)
		}
		byClass[l["outcome"]+"/"+l["class"]] = m.GetCounter().GetValue()
	}
	if byClass["ok/"] != 1 || byClass["error/http_5xx"] != 1 || len(byClass) != 2 {
		t.Errorf("sixpin_requests_total by outcome/class = %v", byClass)
	}
	if g := fams["sixpin_in_flight"]; g == nil || g.Metric[0].GetGauge().GetValue() != 3 {
		t.Errorf("sixpin_in_flight = %v, want 3", g)
	}
	for name, count := range map[string]uint64{"sixpin_ttft_seconds": 1, "sixpin_itl_seconds": 2, "sixpin_e2e_seconds": 1, "sixpin_schedule_lag_seconds": 2} {
		h := fams[name].GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != count || len(h.GetBucket()) == 0 {
			t.Errorf("%s: %d samples in %d classic buckets, want %d samples", name, h.GetSampleCount(), len(h.GetBucket()), count)
		}
	}
	if h := fams["sixpin_ttft_seconds"].GetMetric()[0].GetHistogram(); h.GetSampleSum() != 0.1 {
		t.Errorf("TTFT sum = %v s, want 0.1 (first chunk − scheduled)", h.GetSampleSum())
	}

	inflight.Store(0)
	run.End()
	native := scrape(t, s.URL(), true)
	h := native["sixpin_itl_seconds"].GetMetric()[0].GetHistogram()
	if len(h.GetPositiveSpan()) == 0 || h.GetZeroThreshold() == 0 {
		t.Errorf("ITL is not a native histogram in the protobuf exposition: %v", h)
	}
	if g := native["sixpin_in_flight"]; g.Metric[0].GetGauge().GetValue() != 0 {
		t.Errorf("in flight after End = %v, want 0", g.Metric[0].GetGauge().GetValue())
	}
}
