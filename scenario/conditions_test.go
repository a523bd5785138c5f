package scenario

import (
	"reflect"
	"strings"
	"testing"
)

// abort_on keeps each condition's text and its place in the file, in
// its list form and its one-string form alike.
func TestAbortOnPositions(t *testing.T) {
	t.Parallel()
	base := "name: a\npins:\n  model: {name: m}\n  prompt: {tokens: 100}\n  output: {tokens: 10}\n  concurrency: {mode: closed, streams: 1}\nrequests: 10\n"
	for _, c := range []struct {
		yaml string
		want Conditions
	}{
		{"abort_on: [ttft_ms.p90 <= 2000, error_rate <= 5%]\n",
			Conditions{{"ttft_ms.p90 <= 2000", 8, 12}, {"error_rate <= 5%", 8, 33}}},
		{"abort_on: \"ttft_ms.p90 <= 2000,  error_rate <= 5%\"\n",
			Conditions{{"ttft_ms.p90 <= 2000", 8, 12}, {"error_rate <= 5%", 8, 34}}},
		{"abort_on:\n  - ttft_ms.p99 <= 9000\n",
			Conditions{{"ttft_ms.p99 <= 9000", 9, 5}}},
	} {
		s, err := Parse("a.yaml", []byte(base+c.yaml))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s.AbortOn, c.want) {
			t.Errorf("%q: %+v, want %+v", c.yaml, s.AbortOn, c.want)
		}
	}
	_, err := Parse("a.yaml", []byte(base+"abort_on: {ttft: 1}\n"))
	if err == nil || !strings.Contains(err.Error(), "a.yaml:8:11: abort_on: must be a list") {
		t.Errorf("a mapping: %v", err)
	}
}
