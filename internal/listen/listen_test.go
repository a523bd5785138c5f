package listen

import (
	"errors"
	"net"
	"strings"
	"testing"
)

var testServer = Server{Flag: "--x", RemoteFlag: "--x-remote", Shows: "the figures"}

// The one rule: loopback unless remote; a bare port is 127.0.0.1, or
// every interface when remote.
func TestListen(t *testing.T) {
	for _, c := range []struct {
		addr   string
		remote bool
		ip     string // where it listens; "" refused
		reach  string
	}{
		{"127.0.0.1:0", false, "127.0.0.1", "this machine only"},
		{":0", false, "127.0.0.1", "this machine only"},
		{"localhost:0", false, "127.0.0.1", "this machine only"},
		{"[::1]:0", false, "::1", "this machine only"},
		{"0.0.0.0:0", false, "", ""},
		{"192.0.2.1:0", false, "", ""},
		{"example.com:0", false, "", ""},
		{"0.0.0.0:0", true, "0.0.0.0", "every interface: other machines reach it too"},
		{":0", true, "::", "every interface: other machines reach it too"},
		{"127.0.0.1:0", true, "127.0.0.1", "this machine only"},
	} {
		ln, err := Listen(testServer, c.addr, c.remote)
		if c.ip == "" {
			if !errors.Is(err, ErrNotLoopback) || !strings.Contains(err.Error(), "--x "+c.addr) || !strings.Contains(err.Error(), "--x-remote") {
				t.Errorf("Listen(%q, %v) = %v, want ErrNotLoopback naming --x and --x-remote", c.addr, c.remote, err)
			}
			if ln != nil {
				ln.Close()
			}
			continue
		}
		if err != nil {
			t.Errorf("Listen(%q, %v): %v", c.addr, c.remote, err)
			continue
		}
		got := ln.Addr().(*net.TCPAddr).IP
		if want := net.ParseIP(c.ip); !got.Equal(want) && !(want.IsUnspecified() && got.IsUnspecified()) {
			t.Errorf("Listen(%q, %v) listens on %s, want %s", c.addr, c.remote, got, c.ip)
		}
		url, reach := Where(ln, "/m")
		if reach != c.reach || !strings.HasPrefix(url, "http://") || !strings.HasSuffix(url, "/m") {
			t.Errorf("Where(%q) = %q, %q; want reach %q", c.addr, url, reach, c.reach)
		}
		ln.Close()
	}
	if _, err := Listen(testServer, "8089", false); err == nil || !strings.Contains(err.Error(), "--x 8089: want HOST:PORT") {
		t.Errorf("a bare port number: %v", err)
	}
}
