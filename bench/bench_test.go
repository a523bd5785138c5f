package bench

import (
	"testing"
	"time"

	"github.com/sixpin/sixpin/results"
)

func TestDisplayURLDropsSecrets(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pass@api.example.com/v1":    "https://api.example.com/v1",
		"http://127.0.0.1:8080/v1?api-key=secret": "http://127.0.0.1:8080/v1",
		"http://127.0.0.1:8080/v1":                "http://127.0.0.1:8080/v1",
	} {
		if got := displayURL(in); got != want {
			t.Errorf("displayURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestScheduleBehind(t *testing.T) {
	m := func(lagP99 float64, requests int, span time.Duration) *results.Measurement {
		return &results.Measurement{
			Windows:   map[string]*results.Window{results.WindowAll: {Requests: requests, ScheduleLagMs: &results.Dist{P99: lagP99}}},
			FirstSent: 0, LastSent: span,
		}
	}
	cases := []struct {
		name   string
		m      *results.Measurement
		behind bool
	}{
		{"on time", m(2, 2001, time.Second), false},
		{"lagging", m(25, 2001, time.Second), true},
		{"rate short", m(2, 1901, time.Second), true},
	}
	for _, c := range cases {
		s := schedule(2000, c.m)
		if s.Behind != c.behind || (s.Behind && s.Note == "") {
			t.Errorf("%s: behind %v (%q), want %v; achieved %.1f", c.name, s.Behind, s.Note, c.behind, s.AchievedRateRPS)
		}
	}
}
