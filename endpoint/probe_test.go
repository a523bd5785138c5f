package endpoint

import (
	"strings"
	"testing"
)

// TestProbeUsageCut: an answer whose stream ends in the middle of its
// usage event (the body ends there) is a failed probe request, sent
// again, and the probe says so when every answer was cut; only a server
// whose answers end cleanly without usage "reports no usage".
func TestProbeUsageCut(t *testing.T) {
	cases := []struct {
		name    string
		fault   func(n int64) fault
		ok      bool
		wantMsg string
	}{
		{"first answer cut", func(n int64) fault {
			if n == 1 {
				return cutUsage
			}
			return answer
		}, true, ""},
		{"every answer cut", func(int64) fault { return cutUsage }, false, "ended in the middle of an event"},
		{"no usage", func(int64) fault { return noUsage }, false, "the server reports no usage"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawServer(t, func(_ string, n int64) fault { return tc.fault(n) })
			c := rawClient(t, s, 1, false)
			tmpl, ok, msg := rawProbe(c)
			switch {
			case ok != tc.ok || !strings.Contains(msg, tc.wantMsg):
				t.Errorf("Probe = %v, %q; want %v and a message with %q", ok, msg, tc.ok, tc.wantMsg)
			case ok && tmpl.Overhead != rawOverhead:
				t.Errorf("overhead %d, want %d", tmpl.Overhead, rawOverhead)
			case !ok && tc.wantMsg != "the server reports no usage" && strings.Contains(msg, "reports no usage"):
				t.Errorf("Probe says %q: the server does report usage, cut off", msg)
			}
		})
	}
}
