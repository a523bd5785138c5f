package analyze

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTexts(t *testing.T) {
	cc := filepath.Join("testdata", "claude-code")
	cx := filepath.Join("testdata", "codex")
	for _, tt := range []struct {
		name  string
		paths []string
		// want are texts that come, in this order; never are texts that
		// must not.
		want, never []string
	}{
		{"claude-code", []string{cc},
			[]string{
				"the parser test fails, fix it",
				"Let me run the tests.",
				`{"command":"go test ./parser/","description":"Run the tests"}`,
				"--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1, want 2",
				"The split is off by one.",
			},
			[]string{"The test expects two tokens; the parser splits once.", "Fix the failing parser test", "No response requested."}},
		{"codex", []string{cx},
			[]string{
				"the parser test fails, fix it",
				`{"command":["bash","-lc","go test ./parser/"],"workdir":"/home/me/work"}`,
				`{"output":"--- FAIL: TestParse\n","metadata":{"exit_code":1,"duration_seconds":9.9}}`,
				"The split is off by one; fixed.",
				"explain the parser",
				"It reads runes.",
			},
			[]string{"**Running the tests**", "summary of the work so far"}},
		{"both", []string{cx, cc},
			[]string{"It reads runes.", "Let me run the tests."}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := texts(t, tt.paths)
			at := 0
			for _, w := range tt.want {
				i := slices.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("text %q missing or out of order in %q", w, got)
				}
				at += i + 1
			}
			for _, n := range tt.never {
				if slices.Contains(got, n) {
					t.Errorf("text %q should be left out", n)
				}
			}
			if again := texts(t, tt.paths); !slices.Equal(again, got) {
				t.Errorf("a second read gives other texts:\n%q\n%q", again, got)
			}
		})
	}
}

func texts(t *testing.T, paths []string) []string {
	t.Helper()
	var got []string
	if err := Texts(context.Background(), paths, func(s string) error { got = append(got, s); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTextsErrors(t *testing.T) {
	var fe *FileError
	err := Texts(context.Background(), []string{filepath.Join("testdata", "nothing-here")}, func(string) error { return nil })
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "nothing-here") {
		t.Errorf("missing path: err = %v, want a FileError naming it", err)
	}
	stop := errors.New("stop")
	if err := Texts(context.Background(), []string{filepath.Join("testdata", "codex")}, func(string) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("fn's error: err = %v, want it returned", err)
	}
}
