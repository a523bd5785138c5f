//go:build linux

package h1

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// detach reads rb until Detach takes it (until its connection's reader
// holds none of it), and returns what it read.
func detach(t *testing.T, rb io.ReadCloser) (*Detached, string) {
	t.Helper()
	var got []byte
	p := make([]byte, 16)
	for {
		if d, ok := Detach(rb); ok {
			return d, string(got)
		}
		n, err := rb.Read(p)
		got = append(got, p[:n]...)
		if err != nil {
			t.Fatalf("not detached before the body's end (%q, %v)", got, err)
		}
	}
}

// readDetached reads d's socket to the body's end (blocking on it with
// poll), and returns the body.
func readDetached(t *testing.T, d *Detached) (string, error) {
	t.Helper()
	var body []byte
	p := make([]byte, 64)
	for {
		fds := []pollFd{{fd: int32(d.FD), events: pollIn}}
		poll(fds, 5000)
		k, err := syscall.Read(d.FD, p)
		if err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return string(body), d.ReadError(err)
		}
		if k == 0 {
			return string(body), d.EOF()
		}
		n, end, err := d.Decode(p[:k])
		body = append(body, p[:n]...)
		if err != nil || end {
			return string(body), err
		}
	}
}

// readAllDetached sends req, takes its answer's body off the connection
// and reads it to its end from the socket: the body whole (what was
// read before the detach and after), and the socket's end. The body
// must not read once detached.
func readAllDetached(t *testing.T, tr *Transport, req *http.Request) (*Detached, string, error) {
	t.Helper()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	d, before := detach(t, resp.Body)
	if _, err := resp.Body.Read(make([]byte, 1)); err == nil {
		t.Error("the body reads after it was detached")
	}
	resp.Body.Close()
	got, err := readDetached(t, d)
	return d, before + got, err
}

type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const pollIn = 0x1

func poll(fds []pollFd, ms int) {
	syscall.Syscall(syscall.SYS_POLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), uintptr(ms))
}

// A streamed answer taken off its connection reads whole from the
// socket, and the connection, given back, carries the next requests: a
// chunked answer and one of a Content-Length, over one connection.
func TestDetachReadsAndGivesBack(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/length" {
			w.Header().Set("Content-Length", "11")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
			io.WriteString(w, "hello world")
			return
		}
		for i := range 3 {
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond)
		}
	})
	tr := newTransport(nil)
	tr.MaxConns = 1
	for i, path := range []string{"/sse", "/length", "/sse", "/sse"} {
		var reused bool
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, srv.URL+path, nil)
		d, got, err := readAllDetached(t, tr, req)
		want := "data: 0\n\ndata: 1\n\ndata: 2\n\n"
		if path == "/length" {
			want = "hello world"
		}
		if err != nil || got != want {
			t.Fatalf("request %d: %q, %v; want %q", i, got, err, want)
		}
		d.Finish(true)
		if reused != (i > 0) {
			t.Errorf("request %d: reused %v", i, reused)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 4 requests, want 1", n)
	}
}

// A body cut short (the server closes mid-chunk) reads as an unexpected
// end, and its socket is closed, not pooled; its MaxConns slot is freed,
// so that the next request can dial.
func TestDetachCutShort(t *testing.T) {
	u := rawServer(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel")
	}, true)
	tr := newTransport(nil)
	tr.MaxConns = 1
	for range 2 {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		d, got, err := readAllDetached(t, tr, req)
		if !errors.Is(err, io.ErrUnexpectedEOF) || got != "hel" {
			t.Fatalf("%q, %v", got, err)
		}
		d.Finish(true)
		if len(tr.idle) != 0 {
			t.Fatal("a connection cut short was pooled")
		}
	}
}

// A detached body's end is its framing's, as Read finds it: a body of a
// Content-Length ends at its length, and the bytes the server sent past
// it keep its connection out of the pool; a body that lasts until the
// server closes ends there, whole, and its connection is not pooled
// either.
func TestDetachFramingEnds(t *testing.T) {
	for _, tc := range []struct {
		name, head, later, want string
		closeAfter              bool
	}{
		{"length with bytes past it", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", "loEXTRA", "hello", false},
		{"until the close", "HTTP/1.1 200 OK\r\n\r\nab", "c", "abc", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := rawServer(t, func(c net.Conn) {
				io.WriteString(c, tc.head)
				time.Sleep(20 * time.Millisecond)
				io.WriteString(c, tc.later)
			}, tc.closeAfter)
			tr := newTransport(nil)
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			d, got, err := readAllDetached(t, tr, req)
			if (err != nil && err != io.EOF) || got != tc.want || !d.Ended() {
				t.Fatalf("%q, %v, ended %v; want %q", got, err, d.Ended(), tc.want)
			}
			d.Finish(true)
			if len(tr.idle) != 0 {
				t.Fatal("a connection whose state is unknown was pooled")
			}
		})
	}
}

// A body whose connection's reader holds some of it (read ahead with the
// head), and one whose request was cut off, are not taken.
func TestDetachRefuses(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: x\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	tr := newTransport(nil)
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Read(make([]byte, 1)) // "data: x\n\n" came with the head: one byte of it read
	if _, ok := Detach(resp.Body); ok {
		t.Error("a body with bytes still in its reader was taken")
	}
	resp.Body.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if resp, err = tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	cancel()
	time.Sleep(10 * time.Millisecond) // the hook closes the connection
	if _, ok := Detach(resp.Body); ok {
		t.Error("a body whose request was cut off was taken")
	}
	resp.Body.Close()
}
