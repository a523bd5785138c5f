package analyze

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"

	oc "github.com/sixpin/sixpin/analyze/opencodetest"
)

// simModel is a made-up endpoint for generated databases: a request
// overhead, prefill speed and decode speed that falls with the context.
type simModel struct {
	provider, model       string
	overheadS, prefillTPS float64
	decodeTPS, decodeAt0  float64 // tok/s at 100K context and at none
	cacheHit              float64
}

var simModels = []simModel{
	{"cerebras", "qwen-3.8-27b", 0.2, 46000, 1040, 1850, 0.88},
	{"local", "qwen-3.8-27b", 0.05, 3000, 146, 157, 0.95},
	{"openrouter", "anthropic/claude-sonnet-9", 0.8, 20000, 55, 70, 0.9},
}

var (
	filler = strings.Repeat("lorem ipsum dolor sit amet ", 8)
	output = strings.Repeat("func main() { fmt.Println(\"hello\") }\n", 16)
)

// genDB writes an opencode-shaped database of about n messages: agentic
// sessions whose context grows turn by turn, each turn a step-start,
// maybe reasoning, text, a tool call (most turns) and a step-finish.
func genDB(tb testing.TB, dir string, n int, seed uint64) string {
	d := oc.New(tb, dir)
	rng := rand.New(rand.NewPCG(seed, 1))
	at := t0
	msgs := 0
	for s := 0; msgs < n; s++ {
		sm := simModels[s%len(simModels)]
		ses := fmt.Sprintf("ses_%06d", s)
		at += int64(rng.IntN(600)) * sec
		d.User(fmt.Sprintf("msg_%06d_000", s), ses, at)
		msgs++
		ctx := 9000 + rng.IntN(4000)
		turns := 20 + rng.IntN(60)
		for k := 1; k <= turns && msgs < n; k++ {
			out := 100 + rng.IntN(500)
			reason := 0
			if rng.IntN(2) == 0 {
				reason = rng.IntN(400)
			}
			read := int(float64(ctx) * sm.cacheHit)
			if k == 1 {
				read = 0
			}
			uncached := ctx - read
			ttft := sm.overheadS + float64(uncached)/sm.prefillTPS + float64(read)/sm.prefillTPS/20
			frac := math.Min(float64(ctx)/100000, 2)
			dec := sm.decodeAt0 - (sm.decodeAt0-sm.decodeTPS)*frac
			genS := float64(out+reason) / dec * (0.9 + 0.2*rng.Float64())
			created := at
			first := created + int64(ttft*1000)
			end := first + int64(genS*1000)
			m := oc.Message{ID: fmt.Sprintf("msg_%06d_%03d", s, k), Session: ses, Provider: sm.provider, Model: sm.model,
				Created: created, Input: uncached, CacheRead: read, Output: out, Reasoning: reason}
			if reason > 0 {
				mid := first + (end-first)*int64(reason)/int64(out+reason)
				m.Parts = append(m.Parts, oc.Reasoning(first, mid), oc.Text(mid, end))
			} else {
				m.Parts = append(m.Parts, oc.Text(first, end))
			}
			toolS := 0.0
			if k < turns {
				m.Finish = "tool-calls"
				toolS = 0.2 + rng.ExpFloat64()*3
				m.Parts = append(m.Parts, oc.Tool(end+20, end+20+int64(toolS*1000)))
				m.Completed = end + 40 + int64(toolS*1000)
			} else {
				m.Finish = "stop"
				m.Completed = end + 15
			}
			assistantBig(d, m)
			msgs++
			at = m.Completed + int64(rng.IntN(3000))
			ctx += out + 200 + rng.IntN(4000)
		}
	}
	return d.Close()
}

// assistantBig writes an assistant message whose parts carry text and
// tool output of realistic size.
func assistantBig(d *oc.DB, m oc.Message) {
	d.Assistant(oc.Message{ID: m.ID, Session: m.Session, Provider: m.Provider, Model: m.Model, Created: m.Created, Completed: m.Completed,
		Finish: m.Finish, Input: m.Input, Output: m.Output, Reasoning: m.Reasoning, CacheRead: m.CacheRead, CacheWrite: m.CacheWrite})
	for _, p := range m.Parts {
		var data string
		if p.Type == "tool" {
			data = fmt.Sprintf(`{"type":"tool","callID":"call_%s","tool":"read","state":{"status":"completed","input":{"filePath":"/home/me/work/main.go"},"output":%q,"title":"main.go","metadata":{"preview":%q},"time":{"start":%d,"end":%d}}}`,
				m.ID, output, filler, p.Start, p.End)
		} else {
			data = fmt.Sprintf(`{"type":%q,"text":%q,"time":{"start":%d,"end":%d},"metadata":{}}`, p.Type, filler, p.Start, p.End)
		}
		d.RawPart(m.ID, m.Session, p.Start, data)
	}
}

var bench100k struct {
	once sync.Once
	dir  string
	path string
}

// TestMain removes the benchmark's database.
func TestMain(m *testing.M) {
	code := m.Run()
	if bench100k.dir != "" {
		os.RemoveAll(bench100k.dir)
	}
	os.Exit(code)
}

// BenchmarkAnalyze100k analyses a database of 100,000 messages (about
// 1,700 sessions, 400,000 parts), built once.
func BenchmarkAnalyze100k(b *testing.B) {
	bench100k.once.Do(func() {
		dir, err := os.MkdirTemp("", "sixpin-bench-")
		if err != nil {
			b.Fatal(err)
		}
		bench100k.dir = dir
		bench100k.path = genDB(b, dir, 100_000, 42)
	})
	b.ResetTimer()
	var r *Report
	for b.Loop() {
		var err error
		r, err = Analyze(context.Background(), Options{DBs: []string{bench100k.path}, MinOutputTokens: DefaultMinOutputTokens, Trace: true})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if r.Counts.Messages != 100_000 {
		b.Fatalf("%d messages, want 100,000", r.Counts.Messages)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/1e6, "heap-MB-after")
	b.ReportMetric(float64(r.Counts.Samples), "samples")
	fi, _ := os.Stat(bench100k.path)
	b.ReportMetric(float64(fi.Size())/1e6, "db-MB")
}

// TestGeneratedDatabase checks the generator against what analyse
// finds.
func TestGeneratedDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 3,000-message database")
	}
	dir := t.TempDir()
	r := analyzeDB(t, Options{DBs: []string{genDB(t, dir, 3000, 7)}})
	if r.Counts.Messages != 3000 || len(r.Models) != 3 || r.Counts.Skipped.ToolOutsideSpan != 0 {
		t.Fatalf("counts %+v, %d models", r.Counts, len(r.Models))
	}
	cer := model(t, r, "cerebras/qwen-3.8-27b")
	loc := model(t, r, "local/qwen-3.8-27b")
	if cer.EffectiveTokS.P50 < 2*loc.EffectiveTokS.P50 {
		t.Errorf("cerebras P50 %v not well above local %v", cer.EffectiveTokS.P50, loc.EffectiveTokS.P50)
	}

}
