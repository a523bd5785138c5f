package endpoint

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/h1"
	"github.com/sixpin/sixpin/record"
)

// rawOverhead is what rawServer's chat template adds to a prompt, in
// tokens (its usage says prompt_tokens = 1 + rawOverhead for any prompt).
const rawOverhead = 7

// fault is what rawServer does with a chat request it has read, instead
// of answering it and keeping the connection.
type fault uint8

const (
	answer      fault = iota // answer, and keep the connection
	resetUnread              // reset the connection (SetLinger(0), Close) without answering
	resetMid                 // answer a first event, then reset the connection
	hangUpAfter              // answer, then close the connection hangUpDelay later, reading nothing more (llama-server)
	hangUpTimer              // answer, and close the connection hangUpDelay later, answering on meanwhile
	cutUsage                 // answer until the middle of the usage event, and end the body there (closing the connection)
	noUsage                  // answer without a usage event
)

// rawServer speaks HTTP/1.1 by hand over a TCP listener, so that a test
// can reset or hang up exactly when it means to: a raw connection, not
// net/http's server, which reads ahead and closes in its own time. It
// answers a chat request with a streamed completion of one token and its
// usage, chunked, without "Connection: close".
type rawServer struct {
	url    string
	opened atomic.Int64 // connections accepted
	// fault says what to do with a request the first time its
	// X-Request-Id is read (n counts the chat requests read, from 1;
	// the probe's are the first); nil: answer every one.
	fault func(id string, n int64) fault
	// hangUpDelay is how long after an answer the server hangs up
	// (hangUpAfter, hangUpTimer): 5 ms unless set before the first
	// request.
	hangUpDelay time.Duration

	n    atomic.Int64
	mu   sync.Mutex
	read map[string]int // X-Request-Id → times the server read the request
}

func newRawServer(t *testing.T, f func(id string, n int64) fault) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{url: "http://" + ln.Addr().String(), fault: f, hangUpDelay: 5 * time.Millisecond, read: map[string]int{}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.opened.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); s.serve(c) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return s
}

// reads returns how many times the server read the request sent with id.
func (s *rawServer) reads(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read[id]
}

func (s *rawServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	bw := bufio.NewWriter(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		id := req.Header.Get("X-Request-Id")
		s.mu.Lock()
		s.read[id]++
		first := s.read[id] == 1
		s.mu.Unlock()
		f := answer
		if n := s.n.Add(1); s.fault != nil && first {
			f = s.fault(id, n)
		}
		if f == resetUnread {
			reset(c)
			return
		}
		if f == cutUsage {
			bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
		} else {
			bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		}
		event := func(data string) {
			if f == cutUsage {
				bw.WriteString(data)
				return
			}
			fmt.Fprintf(bw, "%x\r\n%s\r\n", len(data), data)
		}
		event(`data: {"choices":[{"index":0,"delta":{"content":"tok"},"finish_reason":null}]}` + "\n\n")
		if f == resetMid {
			bw.Flush()
			reset(c)
			return
		}
		event(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\n")
		usage := fmt.Sprintf(`data: {"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":1,"total_tokens":%d}}`+"\n\n", 1+rawOverhead, 2+rawOverhead)
		switch f {
		case cutUsage:
			event(usage[:len(usage)/2])
			bw.Flush()
			return
		case noUsage:
		default:
			event(usage)
		}
		event("data: [DONE]\n\n")
		bw.WriteString("0\r\n\r\n")
		if bw.Flush() != nil {
			return
		}
		switch f {
		case hangUpAfter:
			time.Sleep(s.hangUpDelay)
			return
		case hangUpTimer:
			// Read on and answer meanwhile, as a server whose
			// keep-alive timer runs apart from its requests.
			time.AfterFunc(s.hangUpDelay, func() { c.Close() })
		}
	}
}

// reset closes c with a reset (RST) rather than an end of stream.
func reset(c net.Conn) {
	c.(*net.TCPConn).SetLinger(0)
	c.Close()
}

// transports are the two ways a run's requests go out: sixpin's own
// HTTP/1.1 transport (plain http) and net/http's (https, a proxy), here
// over plain TCP.
var transports = []struct {
	name    string
	netHTTP bool
}{{"h1", false}, {"net/http", true}}

// rawClient is a client of s with conns connections, sending request ids
// (req-1, req-2, …); netHTTP sends its requests through net/http's
// transport instead of sixpin's own.
func rawClient(t *testing.T, s *rawServer, conns int, netHTTP bool) *Client {
	t.Helper()
	c, err := New(Target{BaseURL: s.url + "/v1", Model: "m"}, Options{Conns: conns, RequestIDPrefix: "req"})
	if err != nil {
		t.Fatal(err)
	}
	if netHTTP {
		c.httpc.Transport = c.httpc.Transport.(*h1.Transport).Fallback
		c.fresh.Transport = c.fresh.Transport.(*h1.Transport).Fallback
	}
	t.Cleanup(c.Close)
	return c
}

// rawProbe probes c as a run does before load.
func rawProbe(c *Client) (Template, bool, string) { return probeCtx(context.Background(), c) }

// probeCtx is rawProbe on ctx: a one-token prompt (a word to the
// simulator), a short backoff.
func probeCtx(ctx context.Context, c *Client) (Template, bool, string) {
	tmpl, ok, msg, _ := Probe(ctx, c, ProbeRequest{One: "tok", Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})
	return tmpl, ok, msg
}

// checkReadOnce fails t for a request the server read more than once
// (sent again), and for one the server never read unless it failed.
func checkReadOnce(t *testing.T, s *rawServer, recs []*record.Record) {
	t.Helper()
	for _, rec := range recs {
		switch n := s.reads(rec.RequestID); {
		case n > 1:
			t.Errorf("request %d (%s) was read by the server %d times: sent again (%d reconnects; %s: %s)",
				rec.Index, rec.RequestID, n, rec.Reconnects, rec.Err, rec.ErrMsg)
		case n == 0 && !rec.Failed():
			t.Errorf("request %d (%s) succeeded, and the server never read it", rec.Index, rec.RequestID)
		}
	}
}

// failures lists the failed records, one a line.
func failures(recs []*record.Record) string {
	var b strings.Builder
	for _, rec := range recs {
		if rec.Failed() {
			fmt.Fprintf(&b, "\n  request %d (%s): %s: %s", rec.Index, rec.RequestID, rec.Err, rec.ErrMsg)
		}
	}
	return b.String()
}
