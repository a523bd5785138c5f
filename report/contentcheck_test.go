package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/results"
)

// The card's seventh row, content: unchecked it is ? and not among the
// pins left unverified; checked, ! with the line under the card when the
// spread clears the threshold beyond the noise (naming the drafter only
// when the server counted one), ? within the noise, ✓ under it.
func TestContentRow(t *testing.T) {
	slice := func(class string, p50 float64, spec bool) results.ContentSlice {
		s := results.ContentSlice{Class: class, Window: results.WindowSteady, DecodeTokS: &results.Dist{P50: p50}, Valid: true}
		if spec {
			s.SpecDecode = &results.SpecDecode{State: results.SpecOn}
		}
		return s
	}
	check := func(spec, noisy bool, spread float64) *results.ContentCheck {
		cc := &results.ContentCheck{SliceS: 30, ThresholdPct: 15, Base: "prose",
			Classes: []results.ContentSlice{slice("prose", 100, spec), slice("code", 100*(1+spread/100), spec)}}
		cc.Judge(func(string, string) (float64, float64, bool) {
			if noisy {
				return 1.01, 1 + 2*spread/100, true
			}
			return 1 + 0.9*spread/100, 1 + 1.1*spread/100, true
		})
		return cc
	}
	for _, c := range []struct {
		name       string
		cc         *results.ContentCheck
		mark, want string
		sensitive  bool
	}{
		{"not checked", nil, "?", "run with --content-check", false},
		{"a drafter", check(true, false, 40), "!", "a speculative drafter guesses code better than prose", true},
		{"no drafter counted", check(false, false, 40), "!", "the server counted no speculative decoding", true},
		{"within the noise", check(true, true, 20), "?", "within the slices' noise", false},
		{"insensitive", check(true, false, 5), "✓", "content-insensitive", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			card := PinCard(&results.Run{Headline: results.WindowSteady, ContentCheck: c.cc, Windows: map[string]*results.Window{}})
			row := card.Rows[len(card.Rows)-1]
			if row.Pin != "content" || row.N != 7 || row.Mark() != c.mark || !strings.Contains(row.Reason, c.want) {
				t.Errorf("row %+v, want %s and %q", row, c.mark, c.want)
			}
			if (card.Sensitive != "") != c.sensitive || slices.Contains(card.Unverified, "content") {
				t.Errorf("sensitive line %q, unverified %v", card.Sensitive, card.Unverified)
			}
		})
	}
}
