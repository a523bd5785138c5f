package results

import (
	"fmt"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/record"
)

// The verdicts' reasons and the invalid run's causes are text the results
// file records; these format their figures the way every report does.

// ClassList formats error counts by class in report order.
func ClassList(m map[string]int) string {
	var parts []string
	for _, c := range record.ErrorClasses {
		if n := m[string(c)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
	}
	return strings.Join(parts, ", ")
}

func num(v float64) string   { return numfmt.Sig(v) }
func group(v float64) string { return numfmt.Thousands(v) }
func pct(f float64) string   { return numfmt.Percent(f) }
