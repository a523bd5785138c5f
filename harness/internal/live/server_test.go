package live

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestLoopbackOnly(t *testing.T) {
	for _, c := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:0", false, true},
		{":0", false, true}, // a bare port listens on 127.0.0.1
		{"localhost:0", false, true},
		{"[::1]:0", false, true},
		{"0.0.0.0:0", false, false},
		{"192.0.2.1:0", false, false},
		{"example.com:0", false, false},
		{"0.0.0.0:0", true, true},
		{"8089", false, false}, // no port
	} {
		t.Run(c.addr, func(t *testing.T) {
			var opts []Option
			if c.remote {
				opts = append(opts, AllowRemote())
			}
			s, err := Start(c.addr, func() Snapshot { return Snapshot{} }, opts...)
			if err == nil {
				defer s.Close()
				if c.addr == ":0" && !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
					t.Errorf("%s listens at %s, want 127.0.0.1", c.addr, s.URL())
				}
			}
			if got := err == nil; got != c.ok {
				t.Fatalf("Start(%q) error = %v, want ok=%v", c.addr, err, c.ok)
			}
			if !c.ok && c.addr != "8089" && !errors.Is(err, ErrNotLoopback) {
				t.Errorf("error %v does not say the address is not loopback", err)
			}
		})
	}
}

// The page, its script and style are served from the binary; events carry
// the source's snapshots, numbered; the report appears once set.
func TestServes(t *testing.T) {
	var n atomic.Int64
	s, err := Start("127.0.0.1:0", func() Snapshot { return Snapshot{State: "running", Done: n.Add(1)} }, WithInterval(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(s.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for path, want := range map[string]string{"": "<script src=\"live.js\">", "live.js": "EventSource", "live.css": "body"} {
		resp, body := get(path)
		if resp.StatusCode != 200 || !strings.Contains(body, want) {
			t.Errorf("GET /%s: %s, lacks %q", path, resp.Status, want)
		}
	}
	if resp, _ := get("report"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /report before the end: %s, want 404", resp.Status)
	}

	resp, err := http.Get(s.URL() + "events")
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("events Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var seqs []int64
	for len(seqs) < 3 && sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var snap Snapshot
		if err := json.Unmarshal([]byte(data), &snap); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, snap.Seq)
	}
	resp.Body.Close()
	if len(seqs) != 3 || seqs[0] >= seqs[1] || seqs[1] >= seqs[2] {
		t.Errorf("event seqs %v, want three rising", seqs)
	}

	s.SetFinal([]byte("<!DOCTYPE html><title>final</title>"))
	if resp, body := get("report"); resp.StatusCode != 200 || !strings.Contains(body, "final") {
		t.Errorf("GET /report after SetFinal: %s %q", resp.Status, body)
	}
	var snap Snapshot
	_, body := get("snapshot")
	if err := json.Unmarshal([]byte(body), &snap); err != nil || !snap.Final || snap.State != "finished" {
		t.Errorf("snapshot after SetFinal: %+v (%v)", snap, err)
	}
}
