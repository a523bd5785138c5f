package record

import (
	"strings"
	"testing"
)

// Prose is not degenerate; a loop is, however it starts; a short answer
// is too short to judge; and the scores say why.
func TestScoreOutput(t *testing.T) {
	t.Parallel()
	prose := "Speculative decoding drafts several tokens with a small model and verifies them in one pass of the large one, " +
		"so its speed depends on how often the draft is right. Ordinary answers vary their wording from sentence to sentence, " +
		"mix explanation with examples, name files and functions, and rarely repeat a phrase longer than a few words; " +
		"a benchmark that measures such answers measures the server. One stuck in a loop measures the drafter instead, " +
		"because the next token of a loop is trivially guessed."
	loop := strings.Repeat("I will now call the tool again. ", 60)
	for _, c := range []struct {
		name       string
		text       string
		degenerate bool
		minShare   float64
		maxShare   float64
	}{
		{"prose", prose, false, 0, 0.1},
		{"a loop", loop, true, 0.95, 1},
		{"prose, then a loop", prose + " " + loop, true, 0.5, 1},
		{"a loop shorter than it takes to judge", "again again again again again", false, 0, 1},
		{"escaped text as it streams", strings.Repeat(`\"ok\",\n`, 200), true, 0.9, 1},
	} {
		s := ScoreOutput([]byte(c.text))
		if s == nil {
			t.Fatalf("%s: no score", c.name)
		}
		if s.Degenerate() != c.degenerate || s.RepeatShare < c.minShare || s.RepeatShare > c.maxShare {
			t.Errorf("%s: degenerate %v, repeat share %.3f (want %v, in [%g, %g]); %+v", c.name, s.Degenerate(), s.RepeatShare, c.degenerate, c.minShare, c.maxShare, s)
		}
	}
	p, l := ScoreOutput([]byte(prose)), ScoreOutput([]byte(loop))
	if p.Distinct2 < 0.9 || l.Distinct2 > 0.2 || l.Compression < 5*p.Compression {
		t.Errorf("distinct-2 %.2f vs %.2f, compression %.1f vs %.1f: a loop repeats its pairs and compresses far better", p.Distinct2, l.Distinct2, p.Compression, l.Compression)
	}
	if ScoreOutput([]byte("  \n ")) != nil {
		t.Error("no word, yet a score")
	}
}

// The sample is the first 256 requests, then one in 16.
func TestKeepsText(t *testing.T) {
	t.Parallel()
	kept := 0
	for n := range int64(10000) {
		if KeepsText(n) {
			kept++
		}
	}
	if want := 256 + (10000-256+15)/16; kept != want {
		t.Errorf("%d of 10,000 kept, want %d", kept, want)
	}
}

// BenchmarkScore scores a 16 KiB answer with a Scorer kept across
// answers, as the collector does; the yardstick, BenchmarkScoreFresh,
// makes one per answer (its DEFLATE writer and maps each time). Their
// ratio is what keeping one saves.
func BenchmarkScore(b *testing.B) {
	text := []byte(strings.Repeat("the server answers every request with a different phrase number ", 260))[:MaxTextBytes]
	var sc Scorer
	b.ReportAllocs()
	for b.Loop() {
		sc.Score(text)
	}
}

func BenchmarkScoreFresh(b *testing.B) {
	text := []byte(strings.Repeat("the server answers every request with a different phrase number ", 260))[:MaxTextBytes]
	b.ReportAllocs()
	for b.Loop() {
		ScoreOutput(text)
	}
}
