package harness

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

// oneWrite buffers the whole answer and sends it in one write, as a
// proxy that buffers a stream does: every token arrives at once.
func oneWrite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := &bufferedWriter{header: w.Header(), status: http.StatusOK}
		next.ServeHTTP(buf, r)
		w.WriteHeader(buf.status)
		_, _ = w.Write(buf.body.Bytes())
	})
}

type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header         { return b.header }
func (b *bufferedWriter) WriteHeader(code int)        { b.status = code }
func (b *bufferedWriter) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedWriter) Flush()                      {}

const shortAnswers = `name: short-answers
seed: 4
pins:
  model: {name: m}
  prompt: {tokens: 50}
  output: {tokens: 36, exact: true}
  concurrency: {mode: closed, streams: 2}
requests: 20
windows: {warmup: 0s, burst: 1s, steady: {start: 0s}}
`

// A decode rate (and ITL, TPOT) counts only where the decode was
// observed: a server that sends each answer in one write (5 ms a token,
// 200 tok/s, on the server's side) gives no decode figure at all — not
// one of 100,000s of tok/s — and the summary says how many requests were
// left out and why; the same server streaming gives 200 tok/s.
func TestDecodeOnlyWhereMeasured(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Model: "m", Timing: sim.TimingFixed, Fixed: sim.Fixed{TTFT: 20 * time.Millisecond, ITL: 5 * time.Millisecond}, Tokenizer: "words"}
	for _, c := range []struct {
		name string
		wrap func(http.Handler) http.Handler
	}{{"one write per answer", oneWrite}, {"streamed", nil}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			endpoint := simServer(t, cfg, c.wrap)
			o, err := run(t, Config{ScenarioPath: scenarioFile(t, shortAnswers), Endpoint: endpoint, Model: "m", Tokenizer: "words", ServerMetrics: ServerMetricsOff})
			if o == nil {
				t.Fatal(err)
			}
			w := o.Run.Windows[results.WindowSteady]
			if c.wrap == nil {
				if w.DecodeUnmeasured != 0 || w.DecodeTokS == nil || w.DecodeTokS.Max > 1000 || w.DecodeTokS.P50 < 100 || w.DecodeTokS.P50 > 300 {
					t.Errorf("streamed: %d unmeasured, decode %+v", w.DecodeUnmeasured, w.DecodeTokS)
				}
				return
			}
			if w.Completed != 20 || w.DecodeUnmeasured != 20 || w.DecodeTokS != nil || w.ITLMs != nil || w.TPOTMs != nil {
				t.Fatalf("completed %d, unmeasured %d, decode %+v, ITL %+v, TPOT %+v; errors %v %v", w.Completed, w.DecodeUnmeasured, w.DecodeTokS, w.ITLMs, w.TPOTMs,
					o.Run.Errors.ByClass, o.Run.Errors.Examples)
			}
			if w.TTFTMs == nil || w.EffectiveTokS == nil {
				t.Errorf("TTFT and effective tok/s are measured whatever the decode: %+v %+v", w.TTFTMs, w.EffectiveTokS)
			}
			var b bytes.Buffer
			if err := report.WriteSummary(&b, o.Run); err != nil {
				t.Fatal(err)
			}
			if want := "decode not measured in 20 of 20 requests"; !strings.Contains(b.String(), want) {
				t.Errorf("the summary lacks %q:\n%s", want, b.String())
			}
		})
	}
}
