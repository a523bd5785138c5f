package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// newTransport is a Transport as sixpin builds one, with fallback as
// its Fallback (net/http's when nil).
func newTransport(fallback http.RoundTripper) *Transport {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if fallback == nil {
		fallback = &http.Transport{}
	}
	return &Transport{Dial: d.DialContext, Fallback: fallback, MaxIdle: 4, IdleTimeout: time.Minute}
}

// countingServer is an httptest server that counts the connections
// opened to it.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// get sends a request through tr and returns the whole body; reused
// says whether it went out on a kept-alive connection.
func get(t *testing.T, tr http.RoundTripper, method, u, body string) (resp *http.Response, text string, reused bool) {
	t.Helper()
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	resp.Body.Close()
	return resp, string(b), reused
}

// A streamed (chunked, flushed per event) answer reads whole, and the
// connection is reused for the next requests: 5 requests, 1 connection.
func TestStreamsAndReusesConnection(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: %s %d\n\n", b, i)
			w.(http.Flusher).Flush()
		}
	})
	tr := newTransport(nil)
	for i := range 5 {
		resp, text, reused := get(t, tr, http.MethodPost, srv.URL+"/v1/x", "hi")
		if want := "data: hi 0\n\ndata: hi 1\n\ndata: hi 2\n\n"; text != want {
			t.Fatalf("body %q, want %q", text, want)
		}
		if resp.TransferEncoding == nil || resp.TransferEncoding[0] != "chunked" || resp.ContentLength != -1 {
			t.Errorf("TransferEncoding %v, ContentLength %d: want chunked, -1", resp.TransferEncoding, resp.ContentLength)
		}
		if reused != (i > 0) {
			t.Errorf("request %d: reused = %v", i, reused)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 5 requests, want 1", n)
	}
}

// The request goes out as net/http writes it: method, path and query,
// Host, a User-Agent, Content-Length, the header, the body.
func TestWritesRequest(t *testing.T) {
	type seen struct {
		method, uri, host, ua, ct, body string
		length                          int64
		close                           bool
	}
	got := make(chan seen, 1)
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, r.UserAgent(), r.Header.Get("Content-Type"), string(b), r.ContentLength, r.Close}
	})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat?x=1", strings.NewReader(`{"a":1}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := newTransport(nil).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s := <-got
	want := seen{"POST", "/v1/chat?x=1", strings.TrimPrefix(srv.URL, "http://"), "Go-http-client/1.1", "application/json", `{"a":1}`, 7, false}
	if s != want {
		t.Errorf("the server saw %+v, want %+v", s, want)
	}
}

// DisableKeepAlives: "Connection: close" goes out, and every request has
// a connection of its own.
func TestKeepAlivesDisabled(t *testing.T) {
	var closing atomic.Int64
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Close {
			closing.Add(1)
		}
		io.WriteString(w, "ok")
	})
	tr := newTransport(nil)
	tr.DisableKeepAlives = true
	for range 3 {
		if _, text, reused := get(t, tr, http.MethodGet, srv.URL, ""); text != "ok" || reused {
			t.Fatalf("body %q, reused %v", text, reused)
		}
	}
	if conns.Load() != 3 || closing.Load() != 3 {
		t.Errorf("%d connections, %d requests with Connection: close; want 3 and 3", conns.Load(), closing.Load())
	}
}

// A Content-Length body, and an answer that says Connection: close: its
// connection is not reused.
func TestContentLengthAndConnectionClose(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		w.Header().Set("Content-Length", "5")
		io.WriteString(w, "hello")
	})
	tr := newTransport(nil)
	for _, path := range []string{"/keep", "/keep", "/close", "/keep"} {
		resp, text, _ := get(t, tr, http.MethodGet, srv.URL+path, "")
		if text != "hello" || resp.ContentLength != 5 {
			t.Fatalf("%s: body %q, ContentLength %d", path, text, resp.ContentLength)
		}
		if resp.Close != (path == "/close") {
			t.Errorf("%s: Close = %v", path, resp.Close)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the one the server closed, then a new one)", n)
	}
}

// A trailer after the last chunk is read past, and the connection reused.
func TestTrailerThenReuse(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		io.WriteString(w, "abc")
		w.(http.Flusher).Flush()
		w.Header().Set("X-Sum", "3")
	})
	tr := newTransport(nil)
	for range 2 {
		if _, text, _ := get(t, tr, http.MethodGet, srv.URL, ""); text != "abc" {
			t.Fatalf("body %q", text)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// rawServer answers every connection with answer(request line), then
// closes it when close is set.
func rawServer(t *testing.T, answer func(conn net.Conn), closeAfter bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					c.Close()
					return
				}
				io.Copy(io.Discard, req.Body)
				answer(c)
				if closeAfter {
					c.Close()
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// Answers net/http's server never writes: 1xx before the answer, a body
// delimited by the connection's close.
func TestRawAnswers(t *testing.T) {
	cases := []struct {
		name, answer, body string
		status             int
	}{
		{"1xx first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", "ok", 201},
		{"until close", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\ndata: 2\n\n", "data: 1\n\ndata: 2\n\n", 200},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nold", "old", 200},
		{"chunk extension", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\n\r\n", "abc", 200},
		{"chunked beats Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n", "hi", 200},
		{"no reason phrase", "HTTP/1.1 204\r\n\r\n", "", 204},
		// Longer than the head's reader (headBytes): read in pieces.
		{"long head", "HTTP/1.1 200 " + strings.Repeat("O", 3*headBytes) + "\r\nX-Long: " + strings.Repeat("v", 5*headBytes) +
			"\r\nTransfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", 2*headBytes, strings.Repeat("b", 2*headBytes)),
			strings.Repeat("b", 2*headBytes), 200},
		{"long content-length body", "HTTP/1.1 200 OK\r\nContent-Length: 3000\r\n\r\n" + strings.Repeat("c", 3000), strings.Repeat("c", 3000), 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := rawServer(t, func(c net.Conn) { io.WriteString(c, tc.answer) }, true)
			resp, text, _ := get(t, newTransport(nil), http.MethodPost, u, "x")
			if resp.StatusCode != tc.status || text != tc.body {
				t.Errorf("status %d body %q, want %d %q", resp.StatusCode, text, tc.status, tc.body)
			}
		})
	}
}

// Broken answers are errors, never a partial success or a hang.
func TestBrokenAnswers(t *testing.T) {
	huge := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", MaxHeadBytes) + "\r\n\r\n"
	cases := []struct{ name, answer, want string }{
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", "malformed"},
		{"HTTP/2 line", "HTTP/2 200\r\n\r\n", "malformed HTTP version"},
		{"bad code", "HTTP/1.1 2x0 OK\r\n\r\n", "malformed HTTP status code"},
		{"header too long", huge, ErrHeadTooLong.Error()},
		{"cut in the head", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n", "unexpected EOF"},
		{"bad Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n", "bad Content-Length"},
		{"gzip framing", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "unsupported Transfer-Encoding"},
		{"closed at once", "", "EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := rawServer(t, func(c net.Conn) { io.WriteString(c, tc.answer) }, true)
			req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader("x"))
			resp, err := newTransport(nil).RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("no error, status %d", resp.StatusCode)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}

// Bodies cut short or framed wrong fail the read, and their connection
// is not reused.
func TestBrokenBodies(t *testing.T) {
	cases := []struct{ name, answer string }{
		{"short Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n"},
		{"cut mid-chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc"},
		{"cut before the trailer's end", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := rawServer(t, func(c net.Conn) { io.WriteString(c, tc.answer) }, true)
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			resp, err := newTransport(nil).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if _, err := io.ReadAll(resp.Body); err == nil {
				t.Error("the body read without an error")
			}
		})
	}
}

// A body closed before its end closes its connection: the next request
// opens another.
func TestEarlyCloseDropsConnection(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("x", 100_000))
	})
	tr := newTransport(nil)
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Read(make([]byte, 10))
	resp.Body.Close()
	if _, err := resp.Body.Read(make([]byte, 1)); !errors.Is(err, http.ErrBodyReadAfterClose) {
		t.Errorf("a read after Close: %v", err)
	}
	if _, text, reused := get(t, tr, http.MethodGet, srv.URL, ""); len(text) != 100_000 || reused {
		t.Errorf("the next request: %d bytes, reused %v", len(text), reused)
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// Cancelling a request mid-stream ends its blocked read at once, with
// the context's cause.
func TestCancelMidStream(t *testing.T) {
	release := make(chan struct{})
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "data: 1\n\n")
		w.(http.Flusher).Flush()
		<-release
	})
	defer close(release)
	cause := errors.New("stalled")
	ctx, cancel := context.WithCancelCause(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("x"))
	resp, err := newTransport(nil).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64)
	if n, err := resp.Body.Read(buf); err != nil || string(buf[:n]) != "data: 1\n\n" {
		t.Fatalf("first read %q, %v", buf[:n], err)
	}
	time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
	start := time.Now()
	_, err = resp.Body.Read(buf)
	if !errors.Is(err, cause) {
		t.Errorf("the blocked read returned %v, want the cause", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the read took %v to end", d)
	}
}

// A request cancelled before its answer fails with the cause, and a
// dial that fails is the dial's error.
func TestCancelAndDialErrors(t *testing.T) {
	release := make(chan struct{})
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if _, err := newTransport(nil).RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled before the answer: %v", err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	req, _ = http.NewRequest(http.MethodGet, "http://"+addr, nil)
	var opErr *net.OpError
	if _, err := newTransport(nil).RoundTrip(req); !errors.As(err, &opErr) || opErr.Op != "dial" {
		t.Errorf("refused: %v, want a dial error", err)
	}
}

// recorder is a fallback that records what it was given.
type recorder struct{ got []string }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = append(r.got, req.Method+" "+req.URL.String())
	return &http.Response{StatusCode: 299, Body: http.NoBody, Request: req}, nil
}

// https, a proxied URL, other methods and bodies of unknown length go
// to the fallback.
func TestFallback(t *testing.T) {
	rec := &recorder{}
	tr := newTransport(rec)
	tr.Proxy = func(r *http.Request) (*url.URL, error) {
		if r.URL.Hostname() == "proxied.example" {
			return url.Parse("http://proxy.example:3128")
		}
		return nil, nil
	}
	unknown, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/x", io.MultiReader(strings.NewReader("x")))
	unknown.ContentLength = -1
	for _, req := range []*http.Request{
		mustRequest(t, http.MethodPost, "https://api.example/v1"),
		mustRequest(t, http.MethodGet, "http://proxied.example/v1"),
		mustRequest(t, http.MethodPut, "http://127.0.0.1:1/x"),
		unknown,
	} {
		resp, err := tr.RoundTrip(req)
		if err != nil || resp.StatusCode != 299 {
			t.Errorf("%s %s: %v, %v: want the fallback's answer", req.Method, req.URL, resp, err)
		}
	}
	if len(rec.got) != 4 {
		t.Errorf("the fallback got %q, want 4 requests", rec.got)
	}
}

func mustRequest(t *testing.T, method, u string) *http.Request {
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// The pool gives back the connection returned last, and keeps at most
// MaxIdle.
func TestPoolLIFOAndBound(t *testing.T) {
	tr := newTransport(nil)
	tr.MaxIdle = 2
	var cs []*conn
	for range 3 {
		a, b := net.Pipe()
		defer b.Close()
		c := &conn{nc: a}
		cs = append(cs, c)
		tr.put(c)
	}
	if got := tr.takeIdle(); got != cs[1] {
		t.Error("takeIdle did not return the connection returned last (of those kept)")
	}
	if _, err := cs[2].nc.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("the connection past MaxIdle was not closed: %v", err)
	}
	tr.CloseIdleConnections()
	if tr.takeIdle() != nil {
		t.Error("CloseIdleConnections left one")
	}
}

// The dechunker gives the same data however the raw bytes are split
// across reads (one byte at a time up to all at once), with extensions
// and a trailer, and says where the body ended.
func TestDechunkerSplits(t *testing.T) {
	raw := "5\r\nhello\r\n1A;name=value\r\n" + strings.Repeat("z", 26) + "\r\n001 \r\n!\r\n0\r\nX-Sum: 3\r\nX-Other: 4\r\n\r\nEXTRA"
	want := "hello" + strings.Repeat("z", 26) + "!"
	for k := 1; k <= len(raw); k++ {
		var d dechunker
		var got []byte
		extra := 0
		for i := 0; i < len(raw) && d.state != ended; i += k {
			p := []byte(raw[i:min(i+k, len(raw))])
			data, x, err := d.decode(p)
			if err != nil {
				t.Fatalf("split %d at %d: %v", k, i, err)
			}
			got, extra = append(got, p[:data]...), x
		}
		if string(got) != want || d.state != ended {
			t.Fatalf("split %d: %q (ended %v), want %q", k, got, d.state == ended, want)
		}
		if k == len(raw) && extra != len("EXTRA") {
			t.Errorf("whole: %d bytes after the end, want 5", extra)
		}
	}
}

// Malformed framing is an error however it is split.
func TestDechunkerErrors(t *testing.T) {
	cases := map[string]error{
		"5\r\nhelloXX":                           errChunkEnd,
		"g\r\n":                                  errChunkSize,
		"\r\n":                                   errChunkSize,
		"11111111111111111\r\n":                  errChunkSize,
		strings.Repeat("1", 5000):                errChunkLine,
		"0\r\n" + strings.Repeat("X: 1\r\n", 65): errChunkTrailer,
	}
	for raw, want := range cases {
		for _, k := range []int{1, 3, len(raw)} {
			var d dechunker
			var err error
			for i := 0; i < len(raw) && err == nil; i += k {
				_, _, err = d.decode([]byte(raw[i:min(i+k, len(raw))]))
			}
			if !errors.Is(err, want) {
				t.Errorf("%.20q split %d: %v, want %v", raw, k, err, want)
			}
		}
	}
}

// A server that writes its answer a byte at a time: the stream still
// reads whole and the connection is reused.
func TestByteAtATimeServer(t *testing.T) {
	answer := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n0\r\n\r\n"
	var conns atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					for i := range len(answer) {
						c.Write([]byte{answer[i]})
					}
				}
			}()
		}
	}()
	tr := newTransport(nil)
	for range 3 {
		if _, text, _ := get(t, tr, http.MethodPost, "http://"+ln.Addr().String(), "x"); text != "data: 1\n\ndata: 2\n\n" {
			t.Fatalf("body %q", text)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// While a request's dial waits (a server's full accept queue), a
// connection another request returns is taken instead, once the dial has
// waited for longer than handOverAfter, and a dial that
// then fails fails no request: 5 requests at once, one dial that works,
// four that hang and fail.
func TestTakesReturnedConnectionWhileDialling(t *testing.T) {
	var dials atomic.Int64
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		// The first answer waits until every request has been dialling
		// for longer than handOverAfter.
		for deadline := time.Now().Add(5 * time.Second); dials.Load() < 5 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(handOverAfter + 20*time.Millisecond)
		io.WriteString(w, "ok")
	})
	release := make(chan struct{})
	defer close(release)
	tr := newTransport(nil)
	d := &net.Dialer{}
	tr.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return d.DialContext(ctx, network, addr)
		}
		<-release
		return nil, errors.New("dial: accept queue full")
	}
	errs := make(chan error, 5)
	for range 5 {
		go func() {
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	timeout := time.After(10 * time.Second)
	for range 5 {
		select {
		case err := <-errs:
			if err != nil {
				t.Errorf("a request failed: %v", err)
			}
		case <-timeout:
			t.Fatal("requests waited for their own dials")
		}
	}
	if n := dials.Load(); n != 5 {
		t.Errorf("%d dials, want 5 (one per request that found no idle connection)", n)
	}
}

// A connection returned while another request's dial has only just
// begun stays with its stream: two streams do not take turns on one
// connection while the second one is being dialled.
func TestKeepsConnectionForQuickDials(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	tr := newTransport(nil)
	get(t, tr, http.MethodGet, srv.URL, "") // one idle connection
	w := tr.wait()                          // a request that has just begun to dial
	if _, _, reused := get(t, tr, http.MethodGet, srv.URL, ""); !reused {
		t.Fatal("the idle connection was not reused")
	}
	select {
	case <-w.ch:
		t.Error("the returned connection went to a dial begun just now")
	default:
	}
	if c := tr.takeIdle(); c == nil {
		t.Error("the returned connection is not in the pool")
	}
	tr.unwait(w)
}

// An idle connection the server has closed (an idle timeout) is passed
// over, as net/http passes it over: the next request goes out on a new
// connection, without an error, and ClosedIdle is told.
func TestPassesOverClosedIdleConnection(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv.Config.IdleTimeout = 20 * time.Millisecond
	srv.Start()
	defer srv.Close()
	tr := newTransport(nil)
	var closed []time.Duration
	tr.ClosedIdle = func(idle time.Duration) { closed = append(closed, idle) }
	get(t, tr, http.MethodGet, srv.URL, "")
	time.Sleep(200 * time.Millisecond) // the server closes the idle connection
	if _, text, reused := get(t, tr, http.MethodGet, srv.URL, ""); text != "ok" || reused {
		t.Errorf("body %q, reused %v: want a new connection", text, reused)
	}
	if len(closed) != 1 || closed[0] <= 0 {
		t.Errorf("ClosedIdle was told %v; want once, of the connection passed over", closed)
	}
	if _, _, reused := get(t, tr, http.MethodGet, srv.URL, ""); !reused {
		t.Error("the new connection was not reused")
	}
}

// keptServer answers the first request on each connection with "ok" and
// keeps the connection; then(c) is what it does after reading the next
// one (nil: nothing, the connection left as it is).
func keptServer(t *testing.T, then func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			go func() {
				br := bufio.NewReader(c)
				for n := 1; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					if n > 1 {
						if then != nil {
							then(c)
						}
						return
					}
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// A request of which nothing could be written is marked ErrUnsent (the
// server cannot have read it: its caller may send it again); one the
// server read and then reset is not.
func TestUnsentRequest(t *testing.T) {
	post := func(tr *Transport, u string, trace *httptrace.ClientTrace) error {
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, u, strings.NewReader("{}"))
		resp, err := tr.RoundTrip(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return err
	}
	t.Run("write refused", func(t *testing.T) {
		u := keptServer(t, nil)
		tr := newTransport(nil)
		var nc net.Conn
		if err := post(tr, u, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { nc = i.Conn }}); err != nil {
			t.Fatal(err)
		}
		// The connection looks idle, and refuses every write.
		nc.(*net.TCPConn).CloseWrite()
		err := post(tr, u, &httptrace.ClientTrace{})
		if !errors.Is(err, ErrUnsent) {
			t.Errorf("err = %v; want ErrUnsent", err)
		}
	})
	t.Run("read, then reset", func(t *testing.T) {
		u := keptServer(t, func(c net.Conn) { c.(*net.TCPConn).SetLinger(0); c.Close() })
		tr := newTransport(nil)
		if err := post(tr, u, &httptrace.ClientTrace{}); err != nil {
			t.Fatal(err)
		}
		var reused bool
		err := post(tr, u, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
		if err == nil || errors.Is(err, ErrUnsent) || !reused {
			t.Errorf("err = %v (reused %v); want a failure on the kept-alive connection, not ErrUnsent", err, reused)
		}
	})
}

// Drained says whether a body's last read took all the connection had:
// an answer written at once, chunked and longer than the reader's
// buffer, is read full, full, …, and only its last read drains the
// connection; an answer written in two parts with a pause between drains
// it after the first part too. (What Read returns cannot tell: the
// chunks' framing is squeezed out of it.)
func TestDrained(t *testing.T) {
	part := "1000\r\n" + strings.Repeat("x", 0x1000) + "\r\n"
	pause := make(chan struct{})
	u := rawServer(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"+part+part+part)
		<-pause
		io.WriteString(c, part+"0\r\n\r\n")
	}, true)
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	resp, err := newTransport(nil).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b := resp.Body.(interface{ Drained() bool })
	// A read smaller than what is waiting leaves the rest waiting; one
	// larger takes all the connection had until the server writes again.
	// (Once the first part has come, the other two are surely there: the
	// server wrote the three at once.)
	buf := make([]byte, 1<<16)
	if _, err := io.ReadFull(resp.Body, buf[:0x1000]); err != nil {
		t.Fatal(err)
	}
	if b.Drained() {
		t.Error("a 4 KiB read of three 4 KiB parts written at once drained the connection")
	}
	for got := 0x1000; got < 3*0x1000; {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got += n
	}
	if !b.Drained() {
		t.Error("a 64 KiB read of the rest did not drain the connection")
	}
	close(pause)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || len(rest) == 0 {
		t.Fatalf("after the pause: %d bytes, %v", len(rest), err)
	}
}

// Under MaxConns the connections open and being dialled never pass the
// bound, though dials are slow and requests keep coming (the first dial
// is quick, the others take longer than handOverAfter, so that without
// the bound the requests handed the first connection leave their dials
// behind and dial again): every request is answered, on at most MaxConns
// connections.
func TestMaxConnsBoundsConnections(t *testing.T) {
	for _, bound := range []int{0, 4} {
		var open, peak atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(5 * time.Millisecond)
			io.WriteString(w, "ok")
		}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			switch s {
			case http.StateNew:
				if n := open.Add(1); n > peak.Load() {
					peak.Store(n)
				}
			case http.StateClosed, http.StateHijacked:
				open.Add(-1)
			}
		}
		srv.Start()
		tr := newTransport(nil)
		tr.MaxIdle, tr.MaxConns = 4, bound
		d := &net.Dialer{}
		var dials atomic.Int64
		tr.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) > 1 {
				time.Sleep(6 * handOverAfter)
			}
			return d.DialContext(ctx, network, addr)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 40 {
					if _, text, _ := get(t, tr, http.MethodGet, srv.URL, ""); text != "ok" {
						t.Errorf("body %q", text)
					}
				}
			})
		}
		wg.Wait()
		tr.CloseIdleConnections()
		srv.Close()
		t.Logf("MaxConns %d: %d dials, at most %d connections open at the server", bound, dials.Load(), peak.Load())
		if bound == 0 && dials.Load() <= 4 {
			t.Errorf("without a bound: %d dials; the test no longer makes surplus ones", dials.Load())
		}
		if bound > 0 && (dials.Load() > int64(bound) || peak.Load() > int64(bound)) {
			t.Errorf("MaxConns %d: %d dials, %d connections open at once", bound, dials.Load(), peak.Load())
		}
	}
}

// A failed dial and a closed connection free their slots; a request that
// waits for room ends with its context.
func TestMaxConnsFreesSlots(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	tr := newTransport(nil)
	tr.MaxConns = 1
	d := &net.Dialer{}
	var dials atomic.Int64
	tr.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return nil, errors.New("refused")
		}
		return d.DialContext(ctx, network, addr)
	}
	if _, err := tr.RoundTrip(mustRequest(t, http.MethodGet, srv.URL)); err == nil {
		t.Fatal("the first dial failed, the request did not")
	}
	for range 3 { // each closed after its answer: its slot is freed for the next
		if _, text, reused := get(t, tr, http.MethodGet, srv.URL+"/close", ""); text != "ok" || reused {
			t.Fatalf("body %q, reused %v", text, reused)
		}
	}
	// One connection held by an unread body: the next request waits for
	// room, until its context ends.
	resp, err := tr.RoundTrip(mustRequest(t, http.MethodGet, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting for room: %v, want the context's deadline", err)
	}
	resp.Body.Close() // closed unread: the connection goes, and its slot
	if _, text, _ := get(t, tr, http.MethodGet, srv.URL, ""); text != "ok" {
		t.Errorf("after the slot was freed: body %q", text)
	}
	if n := dials.Load(); n != 6 {
		t.Errorf("%d dials, want 6 (a failed one, three closed, one held, one after it)", n)
	}
}
