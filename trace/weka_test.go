package trace

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A Weka conversation is a session of its requests and one per subagent,
// named as AIPerf names them, with their recorded lengths, times and
// block size; a turn waits its think_time, or after a subagent the
// recorded gap from the previous request's end.
func TestReadWeka(t *testing.T) {
	for _, open := range []struct {
		name string
		read func(string) (*Trace, error)
	}{
		{"Read", Read},
		{"Open", func(path string) (*Trace, error) { // streamed, as a replay reads it
			f, err := Open(path)
			if err != nil {
				return nil, err
			}
			c := f.Sessions()
			defer c.Close()
			tr := &Trace{Format: f.Summary().Format, Block: f.Summary().BlockTokens}
			for {
				_, s, ok := c.Next()
				if !ok {
					return tr, c.Err()
				}
				tr.Sessions = append(tr.Sessions, s)
			}
		}},
	} {
		t.Run(open.name, func(t *testing.T) {
			tr, err := open.read("testdata/weka.json")
			if err != nil {
				t.Fatal(err)
			}
			if tr.Format != FormatWeka || tr.BlockTokens() != 64 {
				t.Fatalf("format %q, %d tokens a block; want weka, 64", tr.Format, tr.BlockTokens())
			}
			if len(tr.Sessions) != 2 {
				t.Fatalf("%d sessions, want 2", len(tr.Sessions))
			}
			root, sub := tr.Sessions[0], tr.Sessions[1]
			if root.ID != "f64a8d4c-12d" || sub.ID != "f64a8d4c-12d::sa:agent_001" {
				t.Fatalf("sessions %q, %q", root.ID, sub.ID)
			}
			if root.Start != 0 || sub.Start != 6100*time.Millisecond {
				t.Errorf("starts %v, %v; want 0s, 6.1s", root.Start, sub.Start)
			}
			type turn struct {
				offset, think time.Duration
				in, out, ids  int
			}
			var got []turn
			for _, s := range tr.Sessions {
				for _, u := range s.Turns {
					got = append(got, turn{u.Offset, u.Think, u.InputTokens, u.OutputTokens, len(u.HashIDs)})
				}
			}
			want := []turn{
				{0, 0, 200, 20, 4},
				{4 * time.Second, 500 * time.Millisecond, 260, 12, 5},
				// After the subagent: 16 − 4 − api_time 1, not think_time 0.2.
				{16 * time.Second, 11 * time.Second, 330, 30, 6},
				{0, 0, 150, 10, 3},
				{2900 * time.Millisecond, 1900 * time.Millisecond, 180, 8, 3},
			}
			if !slices.Equal(got, want) {
				t.Errorf("turns\n%v\nwant\n%v", got, want)
			}
			// One conversation's hash ids are one namespace: the subagent
			// shares the parent's first two blocks, not the third.
			p, s := root.Turns[0].HashIDs, sub.Turns[0].HashIDs
			if p[0] != s[0] || p[1] != s[1] || p[2] == s[2] {
				t.Errorf("parent blocks %v, subagent's %v: want the first two shared", p[:3], s)
			}
		})
	}
}

// Local hash ids are their conversation's own; global ones are shared
// across the file.
func TestWekaHashScope(t *testing.T) {
	conv := func(id, scope string) string {
		return `{"id": "` + id + `", "block_size": 16, "hash_id_scope": "` + scope + `", "requests": [{"t": 0, "type": "n", "in": 40, "out": 2, "hash_ids": [7, 8, 9]}]}` + "\n"
	}
	for _, c := range []struct {
		scope  string
		shared bool
	}{{"local", false}, {"global", true}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "two.json")
		if err := os.WriteFile(path, []byte(conv("a", c.scope)+conv("b", c.scope)), 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		a, b := tr.Sessions[0].Turns[0].HashIDs, tr.Sessions[1].Turns[0].HashIDs
		if slices.Equal(a, b) != c.shared {
			t.Errorf("%s: %v and %v, shared %v", c.scope, a, b, c.shared)
		}
		if c.shared && !slices.Equal(a, []int{7, 8, 9}) {
			t.Errorf("global ids %v, want them as written", a)
		}
	}
}

// A Weka file is told from the other formats whether it is one compact
// line or pretty-printed.
func TestSniffWeka(t *testing.T) {
	for _, src := range []string{
		`{"id": "a", "block_size": 64, "requests": [{"t": 0, "type": "n", "in": 10, "out": 2}]}`,
		"{\n  \"id\": \"a\",\n  \"block_size\": 64,\n  \"requests\": [{\"t\": 0, \"type\": \"n\", \"in\": 10, \"out\": 2}]\n}\n",
	} {
		tr, err := Decode("t.json", strings.NewReader(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if tr.Format != FormatWeka || len(tr.Sessions) != 1 || tr.Sessions[0].ID != "a" {
			t.Errorf("%q: format %q, %d sessions", src, tr.Format, len(tr.Sessions))
		}
	}
	if !IsTraceName("trace_0001.json") || !IsTraceName("corpus.json.gz") {
		t.Error("a .json trace is not a trace's name")
	}
}

// A file whose sessions do not start in order (a second conversation
// after the first one's subagent) is put in order in memory, and keeps
// its block size.
func TestOpenWekaUnsorted(t *testing.T) {
	one, err := os.ReadFile("testdata/weka.json")
	if err != nil {
		t.Fatal(err)
	}
	two := strings.Replace(string(one), `"id": "f64a8d4c-12d"`, `"id": "second"`, 1)
	path := filepath.Join(t.TempDir(), "two.json")
	if err := os.WriteFile(path, append(one, two...), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	sm := f.Summary()
	if sm.Sessions != 4 || sm.Requests != 10 || sm.BlockTokens != 64 || sm.Format != FormatWeka {
		t.Errorf("summary %+v: want 4 sessions, 10 requests, blocks of 64, weka", sm)
	}
	c := f.Sessions()
	defer c.Close()
	var ids []string
	for {
		_, s, ok := c.Next()
		if !ok {
			break
		}
		ids = append(ids, s.ID)
	}
	want := []string{"f64a8d4c-12d", "second", "f64a8d4c-12d::sa:agent_001", "second::sa:agent_001"}
	if !slices.Equal(ids, want) {
		t.Errorf("sessions in order of start %q, want %q", ids, want)
	}
}
