package endpoint

import (
	"testing"
)

// newClient is a client for tg with the default options.
func newClient(t testing.TB, tg Target) *Client {
	t.Helper()
	c, err := New(tg, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestOutputControl: every spelling a profile may write reads back as
// itself, and nothing else is taken.
func TestOutputControl(t *testing.T) {
	for _, s := range OutputControls() {
		c, err := ParseOutputControl(s)
		if err != nil || c.String() != s {
			t.Errorf("ParseOutputControl(%q) = %v, %v", s, c, err)
		}
	}
	if c, _ := ParseOutputControl("ignore_eos+min_tokens"); !c.Has(ControlIgnoreEOS) || !c.Has(ControlMinTokens) {
		t.Errorf("both controls: %v", c)
	}
	if c, _ := ParseOutputControl("min_tokens"); c.Has(ControlIgnoreEOS) || c.Has(ControlNone) {
		t.Errorf("min_tokens has ignore_eos or none: %v", c)
	}
	for _, bad := range []string{"ignore-eos", "IGNORE_EOS", "ignore_eos+", "min_tokens+ignore_eos+x"} {
		if _, err := ParseOutputControl(bad); err == nil {
			t.Errorf("ParseOutputControl(%q) took it", bad)
		}
	}
}
